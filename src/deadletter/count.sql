-- Dead letters still waiting for a decision.
SELECT count(*)::int AS dead FROM :schema.dead_letters WHERE status = 'dead'
