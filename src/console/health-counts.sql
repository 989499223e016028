-- The console's health numbers in one statement: the outbox's backlog and its oldest row's age, rows the transport
-- refused, dead letters waiting and their inflow (first failures in the last hour and day), effects dead or pending.
SELECT (SELECT count(*) FROM :schema.outbox)::int AS outbox_pending,
       (SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0) FROM :schema.outbox)::float8 AS outbox_oldest_s,
       (SELECT count(*) FROM :schema.outbox_refused)::int AS outbox_refused,
       (SELECT count(*) FROM :schema.dead_letters WHERE status = 'dead')::int AS dead,
       (SELECT coalesce(extract(epoch FROM now() - min(first_failed_at)), 0)
          FROM :schema.dead_letters WHERE status = 'dead')::float8 AS dead_oldest_s,
       (SELECT count(*) FROM :schema.dead_letters WHERE first_failed_at > now() - interval '1 hour')::int AS dead_last_hour,
       (SELECT count(*) FROM :schema.dead_letters WHERE first_failed_at > now() - interval '1 day')::int AS dead_last_day,
       (SELECT count(*) FROM :schema.effects WHERE status = 'dead')::int AS effects_dead,
       (SELECT count(*) FROM :schema.effects WHERE status = 'pending')::int AS effects_pending
