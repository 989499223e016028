-- Whether this group already applied an event, asked by claiming its dedup row in the transaction that gives up on
-- it: a claim another member holds uncommitted (the partition's new owner applying it right now) is waited for, so
-- the answer is final. No row back: applied. A row back: not applied, and the caller removes the claim again
-- (unclaim.sql, same transaction), so a later redrive of the letter is applied.
INSERT INTO :schema.processed_events (consumer, event_id) VALUES ($1, $2::uuid)
ON CONFLICT DO NOTHING
RETURNING event_id
