-- A member leaving cleanly: its leases and membership go at once, so the others take over without waiting.
WITH leases AS (DELETE FROM :schema.log_leases WHERE group_id = $1 AND member_id = $2)
DELETE FROM :schema.log_members WHERE group_id = $1 AND member_id = $2
