// The inventory service: holds (or refuses) seats on OrderConfirmed and releases them on OrderCancelled, orders of
// different keys in parallel lanes (`concurrency: 'key'`); it publishes SeatsHeld / SeatsRefused / SeatsReleased to
// `boxoffice.seats`.
import { createConsumer, createOutbox, createRelay, type Queryable, stderrLogger } from 'effectively';
import { type BoxofficeDeps, dedupRetention, groupName, type RunningService } from '../shared/deps.ts';
import {
  type OrderCancelled,
  OrderCancelledType,
  type OrderConfirmed,
  OrderConfirmedType,
  ordersTopic,
} from '../shared/events.ts';
import { createTables } from '../shared/sql.ts';
import { checkOrderEvent, holdSeats, releaseSeats } from './seats.ts';

export interface Show {
  showId: string;
  capacity: number;
}

/** Puts shows on sale (a show already there is left as it is). */
export async function addShows(db: Queryable, schema: string, shows: Show[]): Promise<void> {
  for (const { showId, capacity } of shows) {
    await db.query(
      `INSERT INTO ${schema}.shows (show_id, capacity, seats_left) VALUES ($1, $2, $2) ON CONFLICT DO NOTHING`,
      [showId, capacity],
    );
  }
}

export interface InventoryOptions {
  /** Shows to put on sale at start. */
  shows?: Show[];
  /** Orders applied at once per partition, each key in order (default 8; keep the pool larger). */
  lanes?: number;
}

export async function startInventory(deps: BoxofficeDeps, options: InventoryOptions = {}): Promise<RunningService> {
  const { db, schema } = deps;
  const logger = deps.logger ?? stderrLogger;
  const faults = deps.faults === undefined ? {} : { faults: deps.faults };
  await createTables(db, import.meta.url, schema);
  await addShows(db, schema, options.shows ?? []);
  const outbox = createOutbox({ schema });
  const consumer = createConsumer({
    db,
    transport: deps.transport,
    schema,
    group: groupName(deps, 'inventory'),
    topics: [ordersTopic],
    concurrency: { mode: 'key', max: options.lanes ?? 8 },
    retention: dedupRetention,
    logger,
    ...faults,
    handler: async (event, { tx }) => {
      if (event.type === OrderConfirmedType)
        await holdSeats(tx, schema, outbox, checkOrderEvent<OrderConfirmed>(event.data));
      else if (event.type === OrderCancelledType)
        await releaseSeats(tx, schema, outbox, checkOrderEvent<OrderCancelled>(event.data));
    },
  });
  const relay = createRelay({ db, schema, producerFactory: () => deps.transport.producer(), logger, ...faults });
  await consumer.start();
  void relay.start();
  return {
    name: 'inventory',
    async close() {
      await consumer.close();
      await relay.close();
    },
  };
}
