-- Of the keys given, those with a row set aside in outbox_refused: their later rows wait.
SELECT DISTINCT key FROM :schema.outbox_refused WHERE key = ANY($1::text[])
