-- the subject's own level first, else the global default (subject '')
SELECT c.compatibility FROM :schema.registry_config c WHERE c.subject IN ($1, '') ORDER BY c.subject DESC LIMIT 1
