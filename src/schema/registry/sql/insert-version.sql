INSERT INTO :schema.registry_subject_versions (subject, version, schema_id)
SELECT $1, coalesce(max(v.version), 0) + 1, $2 FROM :schema.registry_subject_versions v WHERE v.subject = $1
RETURNING version
