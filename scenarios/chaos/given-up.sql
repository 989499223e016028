-- Which of the given order ids (the events' keys) the library gave up on: the group dead-lettered it, or the relay set
-- it aside as refused by the broker. Neither is pending; each is a missing e-mail with its reason.
SELECT key, 'dead-letter' AS how, reason FROM :schema.dead_letters WHERE consumer = $1 AND key = ANY($2::text[])
UNION ALL
SELECT key, 'refused' AS how, reason FROM :schema.outbox_refused WHERE key = ANY($2::text[])
