SELECT DISTINCT v.subject FROM :schema.registry_subject_versions v ORDER BY v.subject
