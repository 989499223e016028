-- The holds on some keys of one topic, locked against a concurrent drain until this transaction ends.
SELECT key, holder_event_id::text AS holder
  FROM :schema.key_holds
 WHERE consumer = $1 AND topic = $2 AND key = ANY($3::text[])
   FOR SHARE
