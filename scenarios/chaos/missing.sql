-- Orders with no e-mail yet: the events the audit must locate (still pending somewhere, or gone).
SELECT o.id::text AS id FROM :schema.orders o WHERE NOT EXISTS (SELECT 1 FROM :schema.emails e WHERE e.order_id = o.id)
