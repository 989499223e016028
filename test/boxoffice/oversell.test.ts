// Inventory never oversells: 24 orders for the last 6 seats of a show, applied in parallel key lanes
// (`concurrency: 'key'`) on the real PostgreSQL, hold exactly 6 seats. Naive twin: the same service with a
// read-then-write take (SELECT seats_left, then UPDATE to what it read minus n) holds more seats than the show has.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { startInventory } from '../../examples/boxoffice/inventory/index.ts';
import { type Change, holdSeats, type TakeSeats } from '../../examples/boxoffice/inventory/seats.ts';
import { type OrderConfirmed, OrderConfirmedType, ordersTopic } from '../../examples/boxoffice/shared/events.ts';
import {
  createConsumer,
  createEvent,
  createOutbox,
  encodeEvent,
  migrate,
  pgDb,
  postgresTransport,
  silentLogger,
  uuidv7,
} from '../../src/index.ts';
import { eventually, randomName } from '../support/fixtures.ts';

const capacity = 6;
const orders = 24;

/** The naive take: read, then write what was read minus n. Two lanes reading the same count both take seats. */
const readThenWrite: TakeSeats = async (tx, schema, showId, seats) => {
  const { rows } = await tx.query<Change>(`SELECT seats_left, version FROM ${schema}.shows WHERE show_id = $1`, [
    showId,
  ]);
  const row = rows[0];
  if (!row || row.seats_left < seats) return undefined;
  await new Promise((resolve) => setTimeout(resolve, 20)); // the work a real handler does between the two
  const left = row.seats_left - seats;
  await tx.query(`UPDATE ${schema}.shows SET seats_left = $2, version = $3 WHERE show_id = $1`, [
    showId,
    left,
    row.version + 1,
  ]);
  return { seats_left: left, version: row.version + 1 };
};

async function lastSeatsRush(t: TestContext, naive: boolean) {
  const db = pgDb({ max: 12 });
  const schema = randomName('t');
  await migrate(db, { schema });
  t.after(async () => {
    await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await db.close();
  });
  const transport = postgresTransport({ db, schema, pollIntervalMs: 20, defaultPartitions: 1 });
  const deps = { db, transport, schema, logger: silentLogger, groupPrefix: `${schema}-` };
  const service = await startInventory(deps, { shows: [{ showId: 'finale', capacity }], lanes: 8 });
  if (naive) {
    await service.close();
    const outbox = createOutbox({ schema });
    const consumer = createConsumer<OrderConfirmed>({
      db,
      transport,
      schema,
      group: `${schema}-naive`,
      topics: [ordersTopic],
      concurrency: { mode: 'key', max: 8 },
      logger: silentLogger,
      handler: (event, { tx }) => holdSeats(tx, schema, outbox, event.data, readThenWrite),
    });
    await consumer.start();
    t.after(() => consumer.close());
  } else t.after(() => service.close());

  const producer = transport.producer();
  await producer.connect();
  const records = Array.from({ length: orders }, (_, i) => {
    const orderId = uuidv7();
    const customer = { name: `buyer ${i}`, email: `buyer${i}@example.test` };
    const data: OrderConfirmed = { orderId, showId: 'finale', seats: 1, customer, amountCents: 5000, version: 1 };
    const source = '/test';
    return encodeEvent(createEvent({ topic: ordersTopic, type: OrderConfirmedType, source, key: orderId, data }));
  });
  await producer.send(records);
  await producer.close();
  const decided = async () => {
    const { rows } = await db.query<{ status: string; n: string }>(
      `SELECT status, count(*) AS n FROM ${schema}.holds GROUP BY status`,
    );
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
  };
  await eventually(async () => Object.values(await decided()).reduce((a, b) => a + b, 0) === orders, 20_000, 'holds');
  const show = (await db.query<{ seats_left: number }>(`SELECT seats_left FROM ${schema}.shows`)).rows[0]!;
  return { held: (await decided()).held ?? 0, seatsLeft: show.seats_left };
}

test('24 orders in parallel lanes for the last 6 seats hold exactly 6', async (t) => {
  const { held, seatsLeft } = await lastSeatsRush(t, false);
  assert.deepEqual({ held, seatsLeft }, { held: capacity, seatsLeft: 0 });
});

test('naive twin: a read-then-write take oversells the show', async (t) => {
  const { held } = await lastSeatsRush(t, true);
  assert.ok(held > capacity, `held ${held} seats of ${capacity}`);
});
