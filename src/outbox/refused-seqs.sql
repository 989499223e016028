-- Every set-aside row (for retry or discard of them all).
SELECT seq FROM :schema.outbox_refused ORDER BY seq
