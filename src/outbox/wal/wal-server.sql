-- What the server offers for logical decoding: its wal_level, free replication slots and wal senders, and whether
-- the current role may replicate.
SELECT current_setting('wal_level') AS wal_level,
       current_setting('max_replication_slots')::int AS max_slots,
       current_setting('max_wal_senders')::int AS max_senders,
       (SELECT rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user) AS can_replicate
