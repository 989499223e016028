// Keys in parallel on the embedded log commit the offset inside each lane's transaction, each lane with the position
// it saw. Two lanes finishing together could commit in the other order and leave the lower position: after a clean
// close the records above it came again, lag never reached 0 on an idle partition, and a dead letter discarded
// meanwhile would have been applied on the redelivery. The batch's final position is now written once its lanes are
// done. Real PostgreSQL, the postgres transport; 20 keys of one record each, handlers of random 0-10 ms, 8 runs (the
// old code left the offset behind in about 6 of 10 such runs).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { pgDb } from '../../src/db/pg.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { sendKeyed } from '../support/embedded-log.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('keys in parallel, embedded log: after a clean close the committed offset is the end, run after run', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { schema } = await freshSchema(t);
  const db = pgDb({ max: 12 }); // a lane per connection
  t.after(() => db.close());
  const transport = postgresTransport({ db, schema, pollIntervalMs: 20, logger: silentLogger });
  const committed: string[] = [];
  for (let run = 0; run < 8; run++) {
    const topic = `final-${run}`;
    await sendKeyed(
      transport,
      topic,
      Array.from({ length: 20 }, (_, n) => `k${n}`),
      '/final',
    );
    let applied = 0;
    const consumer = createConsumer({
      db,
      transport,
      group: 'g',
      topics: [topic],
      schema,
      logger: silentLogger,
      concurrency: { mode: 'key', max: 8 },
      handler: async () => {
        await sleep(Math.random() * 10);
      },
      onOutcome: (_, outcome) => {
        if (outcome === 'applied') applied += 1;
      },
    });
    await consumer.start();
    await eventually(async () => applied === 20, 30_000, 'the 20 records');
    await sleep(200);
    await consumer.close();
    const { rows } = await db.query<{ offset: string }>(
      `SELECT next_offset::text AS offset FROM ${schema}.log_offsets WHERE group_id = 'g' AND topic = $1`,
      [topic],
    );
    committed.push(rows[0]?.offset ?? 'none');
  }
  assert.deepEqual(committed, Array(8).fill('20'));
});
