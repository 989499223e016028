// Issue 11 item 3, end to end on the embedded transport: a record on the dead-letter topic whose forwarding headers do
// not parse (a non-numeric `effectively-original-partition`) is kept as a typed dead letter where it was read, and the
// partition moves on to the next record (before, the NaN failed the insert and settling retried it for ever); a
// main-topic record that fails while carrying another topic's coordinates is kept at its own coordinates.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { RetryHeaders } from '../../src/consumer/retry-topics.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { PermanentError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually } from '../support/fixtures.ts';

test('retry forward headers: a non-numeric original partition on the DLT is a typed dead letter; the partition moves on', async (t) => {
  const db = await pgliteDb();
  t.after(() => db.close());
  const schema = 'forward_headers';
  await migrate(db, { schema });
  const transport = postgresTransport({ db, schema, pollIntervalMs: 10 });
  await transport.admin().createTopics([
    { topic: 'orders', partitions: 1 },
    { topic: 'orders-retry-1', partitions: 1 },
    { topic: 'orders-dlt', partitions: 1 },
  ]);
  const group = 'billing';
  const consumer = createConsumer({
    db,
    transport,
    group,
    topics: ['orders'],
    schema,
    logger: silentLogger,
    retryTopics: { delaysMs: [50] },
    handler: async () => {
      throw new PermanentError('refused');
    },
  });
  const make = (key: string) => createEvent({ topic: 'orders', type: 'x', source: '/t', key, data: { key } });
  const forwarded = (key: string, partition: string) => {
    const record = encodeEvent(make(key));
    return {
      ...record,
      topic: 'orders-dlt',
      headers: {
        ...record.headers,
        [RetryHeaders.group]: group,
        [RetryHeaders.attempt]: '2',
        [RetryHeaders.originalTopic]: 'orders',
        [RetryHeaders.originalPartition]: partition,
        [RetryHeaders.originalOffset]: '12345',
        [RetryHeaders.originalTimestamp]: '1',
        [RetryHeaders.errorMessage]: 'boom',
      },
    };
  };
  // a main-topic record claiming another topic's coordinates (a handler that re-emitted `event.headers`)
  const claimer = encodeEvent(make('claimer'));
  claimer.headers = {
    ...claimer.headers,
    [RetryHeaders.originalTopic]: 'payments',
    [RetryHeaders.originalPartition]: '0',
    [RetryHeaders.originalOffset]: '7',
  };
  const producer = transport.producer();
  await producer.connect();
  t.after(() => producer.close());
  await producer.send([forwarded('bad', 'abc'), forwarded('good', '0')]);
  await producer.send([claimer]);
  await consumer.start();
  t.after(() => consumer.close());
  const store = deadLetterStore({ schema });
  await eventually(async () => (await store.list(db)).length === 3, 20_000, 'three dead letters');
  const letters = await store.list(db);
  const byCode = (code: string) => letters.filter((letter) => letter.code === code);
  const [bad] = byCode('EFF_FORWARD_HEADERS_INVALID');
  assert.ok(bad, JSON.stringify(letters.map((l) => [l.topic, l.partition, l.offset, l.code])));
  assert.equal(bad.topic, 'orders-dlt', 'kept where it was read');
  assert.match(bad.reason, /effectively-original-partition: "abc"/);
  // naive twin: the valid forwarded record behind it is kept at its original coordinates
  assert.ok(letters.some((l) => l.topic === 'orders' && l.partition === 0 && l.offset === '12345'));
  // the claimer failed on the main topic: its letter is at its own coordinates on `orders`, not `payments`
  assert.ok(!letters.some((l) => l.topic === 'payments'), 'no letter takes the claimed coordinates');
  assert.equal(letters.filter((l) => l.topic === 'orders').length, 2);
});
