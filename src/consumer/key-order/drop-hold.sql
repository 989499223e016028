-- The hold goes once nothing is parked behind it.
DELETE FROM :schema.key_holds WHERE consumer = $1 AND topic = $2 AND key = $3
