-- The benchmarks' business effect: one row per applied event (the same work in every consuming mode).
CREATE TABLE IF NOT EXISTS :schema.bench_effects (
  event_id uuid    NOT NULL,
  order_no integer NOT NULL,
  amount   integer NOT NULL
);
