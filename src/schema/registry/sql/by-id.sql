SELECT id, format, schema, refs FROM :schema.registry_schemas WHERE id = $1
