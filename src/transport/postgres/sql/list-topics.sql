-- The topics of the embedded log, by name.
SELECT topic FROM :schema.log_topics ORDER BY topic
