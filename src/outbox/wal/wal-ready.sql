-- The slot's catch-up is done: the rows written before it existed were published from the table. A slot without
-- this mark (a crash during that catch-up) is dropped and made again: it never confirmed anything, so nothing is lost.
INSERT INTO :schema.settings (name, value) VALUES ($1, $2)
ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = now()
