-- registrations take turns per library schema (they are rare; ids and version numbers stay gap-free and ordered)
SELECT pg_advisory_xact_lock(hashtext(':schema.registry'))
