-- Whether any of these transactions (32-bit ids, as pgoutput sends them) is not yet visible to a new snapshot.
-- Logical decoding may send a transaction as soon as its commit record is flushed, a moment before other sessions
-- see it committed (its id still listed as running, or not yet below the snapshot's xmax): a DELETE of its rows in
-- that moment finds nothing, and must be tried again once it is visible. The ids are widened with the epoch of the
-- snapshot's xmax (one epoch back when that puts them far above it).
WITH s AS (
  SELECT pg_current_snapshot() AS snap, pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS xmax
), ids AS (
  SELECT CASE WHEN ((s.xmax >> 32) << 32) + x.xid > s.xmax + 2147483648
              THEN ((s.xmax >> 32) << 32) + x.xid - 4294967296
              ELSE ((s.xmax >> 32) << 32) + x.xid END AS full_id
    FROM unnest($1::bigint[]) AS x(xid), s
)
SELECT EXISTS (
  SELECT 1 FROM ids, s WHERE NOT pg_visible_in_snapshot(ids.full_id::text::xid8, s.snap)
) AS running
