-- Drops set-aside rows for good (never published); the rows of their keys held behind them flow again.
DELETE FROM :schema.outbox_refused WHERE seq = ANY($1::bigint[]) RETURNING seq
