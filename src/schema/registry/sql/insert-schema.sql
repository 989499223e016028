-- $1 format, $2 fingerprint, $3 canonical text, $4 references (JSON); the id of the row, new or already there
-- (under the lock)
WITH inserted AS (
  INSERT INTO :schema.registry_schemas (format, fingerprint, schema, refs) VALUES ($1, $2, $3, $4::jsonb)
  ON CONFLICT (fingerprint) DO NOTHING
  RETURNING id
)
SELECT id FROM inserted
UNION ALL
SELECT s.id FROM :schema.registry_schemas s WHERE s.fingerprint = $2
LIMIT 1
