-- The search service's read model: "seats left" per show, with the inventory version it was taken from.
CREATE TABLE IF NOT EXISTS :schema.show_availability (
  show_id    text PRIMARY KEY,
  seats_left integer NOT NULL,
  version    integer NOT NULL
);
