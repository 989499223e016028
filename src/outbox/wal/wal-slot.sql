-- One logical slot of this database: whether PostgreSQL invalidated it (wal_status 'lost'), who streams from it, and
-- how far behind the server's write position its confirmed position and the WAL it holds are, in bytes.
SELECT slot_name, wal_status, active_pid, confirmed_flush_lsn::text AS confirmed,
       pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint AS lag_bytes,
       pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint AS retained_bytes
  FROM pg_replication_slots
 WHERE slot_name = $1 AND slot_type = 'logical'
