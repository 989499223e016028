-- The inventory service's tables. `shows.version` counts every change of a show's seats (its SeatsHeld and
-- SeatsReleased carry it); `holds` keeps what was decided for each order, one row per order.
CREATE TABLE IF NOT EXISTS :schema.shows (
  show_id    text PRIMARY KEY,
  capacity   integer NOT NULL CHECK (capacity >= 0),
  seats_left integer NOT NULL CHECK (seats_left >= 0),
  version    integer NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS :schema.holds (
  order_id uuid PRIMARY KEY,
  show_id  text NOT NULL,
  seats    integer NOT NULL,
  status   text NOT NULL CHECK (status IN ('held', 'refused', 'released'))
);
