// Search keeps "seats left" with the inventory's version: SeatsHeld versions 7, 9, 8 of one show, delivered in that
// order, leave version 9 (its seats left), on the real PostgreSQL. Naive twin: the same events
// through a plain upsert leave version 8, an older state.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { seatsLeft, startSearch } from '../../examples/boxoffice/search/index.ts';
import { type SeatsHeld, SeatsHeldType, seatsTopic } from '../../examples/boxoffice/shared/events.ts';
import {
  createConsumer,
  createEvent,
  type Db,
  encodeEvent,
  migrate,
  pgDb,
  postgresTransport,
  silentLogger,
  upsert,
  uuidv7,
} from '../../src/index.ts';
import { eventually, randomName } from '../support/fixtures.ts';

const seatsAt = { 7: 30, 9: 28, 8: 29 } as const;

async function deliver798(t: TestContext, db: Db, naive: boolean) {
  const schema = randomName('t');
  await migrate(db, { schema });
  t.after(async () => {
    await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await db.close();
  });
  const transport = postgresTransport({ db, schema, pollIntervalMs: 20 });
  const group = `${schema}-boxoffice-search`;
  const service = await startSearch({ db, transport, schema, logger: silentLogger, groupPrefix: `${schema}-` });
  if (naive) {
    await service.close();
    const consumer = createConsumer<SeatsHeld>({
      db,
      transport,
      schema,
      group,
      topics: [seatsTopic],
      logger: silentLogger,
      handler: async ({ data }, { tx }) => {
        const set = { seats_left: data.seatsLeft, version: data.version };
        await upsert(tx, { table: `${schema}.show_availability`, key: { show_id: data.showId }, values: set });
      },
    });
    await consumer.start();
    t.after(() => consumer.close());
  } else t.after(() => service.close());

  const producer = transport.producer();
  await producer.connect();
  await producer.send(
    ([7, 9, 8] as const).map((version) => {
      const data: SeatsHeld = { showId: 'finale', orderId: uuidv7(), seats: 1, seatsLeft: seatsAt[version], version };
      return encodeEvent(createEvent({ topic: seatsTopic, type: SeatsHeldType, source: '/test', key: 'finale', data }));
    }),
  );
  await producer.close();
  const processed = `SELECT count(*) AS n FROM ${schema}.processed_events WHERE consumer = $1`;
  await eventually(async () => Number((await db.query(processed, [group])).rows[0]!.n) === 3, 15_000, 'three events');
  const { rows } = await db.query<{ version: number }>(`SELECT version FROM ${schema}.show_availability`);
  return { version: rows[0]!.version, seatsLeft: await seatsLeft(db, schema, 'finale') };
}

test('versions 7, 9, 8 leave 9', async (t) => {
  assert.deepEqual(await deliver798(t, pgDb({ max: 4 }), false), { version: 9, seatsLeft: seatsAt[9] });
});

test('naive twin: a plain upsert of 7, 9, 8 leaves 8', async (t) => {
  assert.deepEqual(await deliver798(t, pgDb({ max: 4 }), true), { version: 8, seatsLeft: seatsAt[8] });
});
