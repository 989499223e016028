// "Seats left" per show, kept with the show's inventory version: a late, older SeatsHeld / SeatsReleased changes
// nothing (`versionGuard`), so applying versions 7, 9, 8 leaves 9. A SeatsRefused carries the show's seats left at
// its current version (a refusal changes neither): equal to what was applied, it is stale; newer, it is as true.
import { type Event, PermanentError, type Queryable, versionGuard } from 'effectively';
import type { SeatsChanged, SeatsRefused } from '../shared/events.ts';

export function checkSeatsEvent(data: unknown): SeatsChanged {
  const { showId, seatsLeft, version } = (data ?? {}) as Record<string, unknown>;
  if (typeof showId !== 'string' || !Number.isSafeInteger(seatsLeft) || !Number.isSafeInteger(version))
    throw new PermanentError('not a seats event: needs showId, seatsLeft and version');
  return data as SeatsChanged;
}

/** Applies one seats event: the first for a show inserts its row, later ones update it only when newer. */
export async function applySeats(tx: Queryable, schema: string, event: Event): Promise<'applied' | 'stale'> {
  const { showId, seatsLeft, version } = checkSeatsEvent(event.data);
  if ((event.data as SeatsRefused).reason === 'no-such-show') return 'stale'; // not a show to list
  const first = await tx.query(
    `INSERT INTO ${schema}.show_availability (show_id, seats_left, version) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
    [showId, seatsLeft, version],
  );
  if (first.rowCount === 1) return 'applied';
  return versionGuard(tx, {
    table: `${schema}.show_availability`,
    id: { column: 'show_id', value: showId },
    version,
    set: { seats_left: seatsLeft },
  });
}

/** What the search page shows. */
export async function seatsLeft(db: Queryable, schema: string, showId: string): Promise<number | null> {
  const { rows } = await db.query<{ seats_left: number }>(
    `SELECT seats_left FROM ${schema}.show_availability WHERE show_id = $1`,
    [showId],
  );
  return rows[0]?.seats_left ?? null;
}
