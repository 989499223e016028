-- One dead letter's status (whatever it is), to read it whole with the store.
SELECT status FROM :schema.dead_letters WHERE id = $1::bigint
