SELECT v.subject, v.version, s.id, s.format, s.schema, s.refs, s.fingerprint
FROM :schema.registry_subject_versions v
JOIN :schema.registry_schemas s ON s.id = v.schema_id
WHERE v.subject = $1
ORDER BY v.version
