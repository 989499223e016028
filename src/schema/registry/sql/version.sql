-- one version of a subject ($2), or its latest when $2 is NULL
SELECT v.subject, v.version, s.id, s.format, s.schema, s.refs
FROM :schema.registry_subject_versions v
JOIN :schema.registry_schemas s ON s.id = v.schema_id
WHERE v.subject = $1 AND ($2::integer IS NULL OR v.version = $2)
ORDER BY v.version DESC
LIMIT 1
