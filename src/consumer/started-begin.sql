-- One more start of a record (committed before its handler runs; $5: it runs alone in its transaction). Returns how
-- many times it was started, and started alone, without its apply committing (the row goes in the transaction that
-- applies it, started-done.sql).
INSERT INTO :schema.started_records (consumer, topic, partition, "offset", starts, alone)
VALUES ($1, $2, $3, $4::bigint, 1, CASE WHEN $5::boolean THEN 1 ELSE 0 END)
ON CONFLICT (consumer, topic, partition, "offset") DO UPDATE
  SET starts = started_records.starts + 1,
      alone = started_records.alone + CASE WHEN $5::boolean THEN 1 ELSE 0 END
RETURNING starts, alone
