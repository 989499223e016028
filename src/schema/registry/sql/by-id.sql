SELECT id, format, schema FROM :schema.registry_schemas WHERE id = $1
