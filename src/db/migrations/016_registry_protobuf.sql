-- 016_registry_protobuf: the embedded schema registry keeps Protobuf schemas (the `.proto` text) and the references
-- a schema has to the schemas it imports ([{ "name", "subject", "version" }], in the importing file's terms).
ALTER TABLE :schema.registry_schemas DROP CONSTRAINT registry_schemas_format_check;
ALTER TABLE :schema.registry_schemas ADD CONSTRAINT registry_schemas_format_check
  CHECK (format IN ('avro', 'json', 'protobuf'));
ALTER TABLE :schema.registry_schemas ADD COLUMN refs jsonb NOT NULL DEFAULT '[]';
