-- lost: orders with no e-mail; duplicated: extra e-mails per order plus e-mails with no order.
SELECT
  (SELECT count(*) FROM :schema.orders) AS orders,
  (SELECT count(*) FROM :schema.emails) AS emails,
  (SELECT count(*) FROM :schema.orders o WHERE NOT EXISTS (SELECT 1 FROM :schema.emails e WHERE e.order_id = o.id)) AS lost,
  (SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM :schema.emails GROUP BY order_id) d)
    + (SELECT count(*) FROM :schema.emails e WHERE NOT EXISTS (SELECT 1 FROM :schema.orders o WHERE o.id = e.order_id))
    AS duplicated
