// Dead letters on the embedded transport: the dead letter and the offset past it commit in one transaction.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually } from '../support/fixtures.ts';

test('embedded: a record with no event id is dead-lettered with its offset, the rest applied once', async (t) => {
  const db = await pgliteDb();
  t.after(() => db.close());
  const schema = 'dl_embedded';
  await migrate(db, { schema });
  await db.query(`CREATE TABLE ${schema}.applied (n int NOT NULL)`);
  const transport = postgresTransport({ db, schema, pollIntervalMs: 10 });
  const topic = 'orders';
  await transport.admin().createTopics([{ topic, partitions: 1 }]);
  const records = [0, 1, 2].map((n) =>
    encodeEvent(createEvent({ topic, type: 'x', source: '/t', key: 'k', data: { n } })),
  );
  const { ce_id: _id, ...noId } = records[1]!.headers;
  const producer = transport.producer();
  await producer.send([records[0]!, { ...records[1]!, headers: noId }, records[2]!]);
  const consumer = createConsumer({
    db,
    transport,
    group: 'notifications',
    topics: [topic],
    schema,
    logger: silentLogger,
    handler: async (event, { tx }) => {
      await tx.query(`INSERT INTO ${schema}.applied (n) VALUES ($1)`, [(event.data as { n: number }).n]);
    },
  });
  t.after(() => consumer.close());
  await consumer.start();
  const applied = async () => (await db.query<{ n: number }>(`SELECT n FROM ${schema}.applied ORDER BY n`)).rows;
  await eventually(async () => (await applied()).length === 2, 20_000, 'two applied');
  assert.deepEqual(
    (await applied()).map((row) => row.n),
    [0, 2],
  );
  const letters = await deadLetterStore({ schema }).list(db);
  assert.deepEqual(
    letters.map((letter) => [letter.offset, letter.code, letter.eventId]),
    [['1', 'EFF_MISSING_EVENT_ID', null]],
  );
  const [committed] = await transport.admin().committedOffsets('notifications', topic);
  assert.equal(committed?.offset, '3');
});
