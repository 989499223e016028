INSERT INTO :schema.registry_config (subject, compatibility) VALUES ($1, $2)
ON CONFLICT (subject) DO UPDATE SET compatibility = excluded.compatibility
