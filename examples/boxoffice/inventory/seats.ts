// Holding and releasing seats, in the consumer's transaction: the show's row, the order's hold row and the
// SeatsHeld / SeatsRefused / SeatsReleased event (through the outbox) commit together. A SeatsRefused is how the
// order service learns that an order it confirmed got no seats, the show sold out or not sold here at all (it cancels
// the order: refund and e-mail follow).
import { createEvent, isUuid, type Outbox, PermanentError, type Queryable } from 'effectively';
import {
  type OrderCancelled,
  type OrderConfirmed,
  type OrderEvent,
  type RefusalReason,
  SeatsHeldType,
  type SeatsRefused,
  SeatsRefusedType,
  SeatsReleasedType,
  seatsTopic,
} from '../shared/events.ts';
import { sqlFile } from '../shared/sql.ts';

export type Change = { seats_left: number; version: number };

/** A record the inventory cannot act on is permanent: the consumer keeps it as a dead letter and goes on. */
export function checkOrderEvent<T extends OrderEvent>(data: unknown): T {
  const { orderId, showId, seats } = (data ?? {}) as Record<string, unknown>;
  if (typeof orderId !== 'string' || !isUuid(orderId) || typeof showId !== 'string' || !Number.isSafeInteger(seats))
    throw new PermanentError('not an order event: needs orderId (UUID), showId and seats');
  if ((seats as number) < 1) throw new PermanentError(`order ${orderId} asks for ${seats} seats`);
  return data as T;
}

async function announce(
  tx: Queryable,
  outbox: Outbox,
  type: string,
  order: OrderConfirmed | OrderCancelled,
  change: Change,
  reason?: RefusalReason,
) {
  const data: SeatsRefused = {
    showId: order.showId,
    orderId: order.orderId,
    seats: order.seats,
    seatsLeft: change.seats_left,
    version: change.version,
    ...(reason && { reason }),
  };
  const source = '/boxoffice/inventory';
  await outbox.enqueue(
    tx,
    createEvent({ topic: seatsTopic, type, source, key: order.showId, version: change.version, data }),
  );
}

/** Takes seats of a show if it has them, in one conditional UPDATE; undefined when it has not (or no such show). */
export type TakeSeats = (tx: Queryable, schema: string, showId: string, seats: number) => Promise<Change | undefined>;

export const takeSeats: TakeSeats = async (tx, schema, showId, seats) =>
  (await tx.query<Change>(sqlFile(import.meta.url, 'take.sql', schema), [showId, seats])).rows[0];

/** Holds an order's seats if the show has them; else the hold is refused (sold out) and the refusal announced. */
export async function holdSeats(
  tx: Queryable,
  schema: string,
  outbox: Outbox,
  order: OrderConfirmed,
  take: TakeSeats = takeSeats,
): Promise<void> {
  const decided = await tx.query(
    `INSERT INTO ${schema}.holds (order_id, show_id, seats, status) VALUES ($1, $2, $3, 'held') ON CONFLICT DO NOTHING`,
    [order.orderId, order.showId, order.seats],
  );
  if (decided.rowCount === 0) return; // decided before, or cancelled before it came
  const taken = await take(tx, schema, order.showId, order.seats);
  if (taken) return announce(tx, outbox, SeatsHeldType, order, taken);
  // The show as it is now (a committed seats_left with its version): the refusal changes neither.
  const show = await tx.query<Change>(`SELECT seats_left, version FROM ${schema}.shows WHERE show_id = $1`, [
    order.showId,
  ]);
  await tx.query(`UPDATE ${schema}.holds SET status = 'refused' WHERE order_id = $1`, [order.orderId]);
  // A show not on sale here is refused as well, not dead-lettered: its customer is charged, the refusal refunds them.
  const refusal = show.rows[0] ?? { seats_left: 0, version: 0 };
  await announce(tx, outbox, SeatsRefusedType, order, refusal, show.rows[0] ? undefined : 'no-such-show');
}

/**
 * Gives a cancelled order's seats back. Only a `held` hold has seats to give: a refused one keeps its status (its
 * order's cancel is the refusal's compensation; releasing would oversell). A cancel seen first leaves a released
 * hold, so its confirm holds nothing.
 */
export async function releaseSeats(
  tx: Queryable,
  schema: string,
  outbox: Outbox,
  order: OrderCancelled,
): Promise<void> {
  const held = await tx.query<{ seats: number }>(
    `UPDATE ${schema}.holds SET status = 'released' WHERE order_id = $1 AND status = 'held' RETURNING seats`,
    [order.orderId],
  );
  if (!held.rows[0]) {
    await tx.query(
      `INSERT INTO ${schema}.holds (order_id, show_id, seats, status) VALUES ($1, $2, $3, 'released') ON CONFLICT DO NOTHING`,
      [order.orderId, order.showId, order.seats],
    );
    return;
  }
  const { rows } = await tx.query<Change>(
    `UPDATE ${schema}.shows SET seats_left = seats_left + $2, version = version + 1 WHERE show_id = $1
     RETURNING seats_left, version`,
    [order.showId, held.rows[0].seats],
  );
  await announce(tx, outbox, SeatsReleasedType, order, rows[0]!);
}
