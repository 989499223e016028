-- Released holds whose parked records are still to be applied.
SELECT topic, key FROM :schema.key_holds WHERE consumer = $1 AND status = 'released' ORDER BY held_at LIMIT 100
