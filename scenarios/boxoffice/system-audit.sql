-- The boxoffice's audit, counted from the services' own tables. unheld: orders inventory never decided; unreleased:
-- cancelled orders whose seats are still held; uncompensated: refused orders (sold out) not cancelled; shows_wrong: shows whose seats left disagree with their holds (or are
-- negative: oversold); search_behind: shows whose "seats left" in search is not inventory's; pending: outbox rows
-- not yet published; poisoned: dead letters of the poison order (key $1); other_dead: any other dead letter.
SELECT
  (SELECT count(*) FROM :schema.orders) AS orders,
  (SELECT count(*) FROM :schema.orders WHERE status = 'cancelled') AS cancelled,
  (SELECT count(*) FROM :schema.orders o
    WHERE NOT EXISTS (SELECT 1 FROM :schema.holds h WHERE h.order_id = o.id)) AS unheld,
  (SELECT count(*) FROM :schema.orders o JOIN :schema.holds h ON h.order_id = o.id
    WHERE o.status = 'cancelled' AND h.status = 'held') AS unreleased,
  (SELECT count(*) FROM :schema.holds WHERE status = 'refused') AS refused,
  (SELECT count(*) FROM :schema.orders o JOIN :schema.holds h ON h.order_id = o.id
    WHERE h.status = 'refused' AND o.status <> 'cancelled') AS uncompensated,
  (SELECT count(*) FROM :schema.shows s
    WHERE s.seats_left < 0
       OR s.capacity - s.seats_left <> (SELECT coalesce(sum(h.seats), 0) FROM :schema.holds h
                                          WHERE h.show_id = s.show_id AND h.status = 'held')) AS shows_wrong,
  (SELECT count(*) FROM :schema.shows s LEFT JOIN :schema.show_availability a USING (show_id)
    WHERE s.version > 0 AND a.seats_left IS DISTINCT FROM s.seats_left) AS search_behind,
  (SELECT count(*) FROM :schema.outbox) AS pending,
  (SELECT count(*) FROM :schema.dead_letters WHERE key = $1) AS poisoned,
  (SELECT count(*) FROM :schema.dead_letters WHERE key IS DISTINCT FROM $1) AS other_dead
