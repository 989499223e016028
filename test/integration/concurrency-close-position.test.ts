// Keys in parallel on the embedded log (issue 27, item 4): each lane commits the offset inside its own transaction with
// the position it saw, so two lanes in flight together each see the other unfinished and commit a position below the
// end; the batch's final position, written once the lanes are done, is what brings the offset to the end. close()
// aborts the batch's signal, and the final position used to be skipped then: after a clean close the committed
// offset was behind applied records (they came again). Deterministic: both lanes are held in their handlers until
// close() was called. Real PostgreSQL, the postgres transport.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { pgDb } from '../../src/db/pg.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { sendKeyed } from '../support/embedded-log.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

test('keys in parallel, embedded log: close() while two lanes commit still writes the final position', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { schema } = await freshSchema(t);
  const db = pgDb({ max: 6 });
  t.after(() => db.close());
  const transport = postgresTransport({ db, schema, pollIntervalMs: 20, logger: silentLogger });
  const topic = 'close-position';
  await sendKeyed(transport, topic, ['A', 'B'], '/close');
  let entered = 0;
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const applied: number[] = [];
  const consumer = createConsumer({
    db,
    transport,
    group: 'g',
    topics: [topic],
    schema,
    logger: silentLogger,
    concurrency: { mode: 'key', max: 2 },
    handler: async (event) => {
      entered += 1;
      await released;
      applied.push((event.data as { n: number }).n);
    },
  });
  t.after(() => consumer.close());
  await consumer.start();
  await eventually(async () => entered === 2, 30_000, 'both lanes in their handlers');
  const closed = consumer.close();
  release();
  await closed;
  assert.deepEqual(
    applied.sort((a, b) => a - b),
    [0, 1],
    'both records applied',
  );
  const { rows } = await db.query<{ offset: string }>(
    `SELECT next_offset::text AS offset FROM ${schema}.log_offsets WHERE group_id = 'g' AND topic = $1`,
    [topic],
  );
  assert.equal(rows[0]?.offset, '2', 'the committed offset is past both applied records');
});
