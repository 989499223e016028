// A relay chunk is bounded by bytes as well as rows: rows are taken while the chunk holds less than `batchBytes`, so a
// chunk of large rows cannot outgrow the Kafka client's local queue or the embedded log's parameter size (300 rows of
// 1 MB in one chunk made the embedded log's bytea[] parameter fail for good). Real PostgreSQL, the embedded log in the
// same database; the producer is the transport's, counting what each send carried.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import type { Producer } from '../../src/transport/port.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

/** 20 rows of ~4 KB relayed with `batchBytes`; the number of records of each send. */
async function sends(t: import('node:test').TestContext, batchBytes: number) {
  const { db, schema } = await freshSchema(t);
  const transport = postgresTransport({ db, schema });
  await transport.admin().createTopics([{ topic: 'orders', partitions: 1 }]);
  await db.transaction((tx) =>
    createOutbox({ schema }).enqueue(
      tx,
      Array.from({ length: 20 }, (_, n) =>
        createEvent({ topic: 'orders', type: 'x', source: '/t', key: 'k', data: { n, pad: 'x'.repeat(4_000) } }),
      ),
    ),
  );
  const sizes: number[] = [];
  const counted = (): Producer => {
    const producer = transport.producer();
    return {
      connect: () => producer.connect(),
      send: (records) => producer.send(records),
      sendWithin: (tx, records) => {
        sizes.push(records.length);
        return producer.sendWithin!(tx, records);
      },
      usesDb: (other) => producer.usesDb!(other),
      close: () => producer.close(),
    };
  };
  const relay = createRelay({ db, schema, producerFactory: counted, batchBytes, logger: silentLogger });
  t.after(() => relay.close());
  await relay.start();
  const left = async () =>
    Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.outbox`)).rows[0]?.n);
  await eventually(async () => (await left()) === 0, 20_000, 'every row published');
  return sizes;
}

test('batchBytes 10,000: no send carries more than three rows of 4 KB, and all 20 go', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const sizes = await sends(t, 10_000);
  assert.equal(
    sizes.reduce((a, b) => a + b, 0),
    20,
  );
  assert.ok(Math.max(...sizes) <= 3, `records per send: ${sizes.join(', ')}`);
});

test('naive twin: bounded by rows only (a budget out of reach), the 20 rows go in one send', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  assert.deepEqual(await sends(t, Number.MAX_SAFE_INTEGER), [20]);
});
