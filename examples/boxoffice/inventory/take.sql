-- Takes $2 seats of show $1 only if it still has them. Concurrent takes of the last seats queue on the row's lock and
-- each re-checks `seats_left >= $2` on the row as the one before left it: never oversold. No row: sold out (or no show).
UPDATE :schema.shows
   SET seats_left = seats_left - $2, version = version + 1
 WHERE show_id = $1 AND seats_left >= $2
RETURNING seats_left, version
