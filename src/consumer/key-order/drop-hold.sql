-- The hold goes once nothing is parked behind it. The check runs again here, in this statement's own snapshot: a batch
-- that parked a record of the key while the drain waited for the hold's lock has committed by now, and keeps it.
DELETE FROM :schema.key_holds h
 WHERE h.consumer = $1 AND h.topic = $2 AND h.key = $3
   AND NOT EXISTS (
     SELECT 1 FROM :schema.parked_records r WHERE r.consumer = $1 AND r.topic = $2 AND r.key = $3)
