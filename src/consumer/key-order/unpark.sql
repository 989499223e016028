DELETE FROM :schema.parked_records WHERE id = $1
