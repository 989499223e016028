-- The holders among these events were applied (or discarded): their parked records may go, in order.
UPDATE :schema.key_holds SET status = 'released'
 WHERE consumer = $1 AND holder_event_id = ANY($2::uuid[]) AND status = 'held'
