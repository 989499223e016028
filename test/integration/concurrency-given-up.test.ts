// Keys in parallel with in-place retries: key X's record (offset 0) fails twice before it applies, key Y's record
// (offset 1) is dead-lettered in its own lane meanwhile. Each retry of X re-fetches the partition from offset 0, so Y's
// record comes again; a dead letter has no dedup row, so it used to be tried afresh each time: dead-lettered again
// (onDeadLetter once per re-fetch) or, when it would pass later, applied AND kept as a dead letter. A record given up
// on is now passed over as finished when it comes again. Real PostgreSQL, the postgres transport.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { PermanentError } from '../../src/errors.ts';
import { embeddedLog, sendKeyed } from '../support/embedded-log.ts';
import { eventually } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

for (const variant of ['always', 'first call only'] as const) {
  test(`keys in parallel: a record dead-lettered while a lower key retries in place is not tried again (Y fails ${variant})`, async (t) => {
    if (!(await needs(t, 'postgres'))) return;
    const { db, schema, consumerOf, transport } = await embeddedLog(t);
    const topic = 'orders';
    await sendKeyed(transport, topic, ['X', 'Y', 'Y']);
    const calls = new Map<number, number>();
    const applied: number[] = [];
    let deadLetters = 0;
    const consumer = createConsumer({
      ...consumerOf(topic),
      concurrency: { mode: 'key', max: 4 },
      maxAttempts: 3,
      retry: { baseMs: 100, capMs: 200 },
      onDeadLetter: () => {
        deadLetters += 1;
      },
      handler: async (event) => {
        const { n } = event.data as { n: number };
        const call = (calls.get(n) ?? 0) + 1;
        calls.set(n, call);
        if (n === 0 && call <= 2) throw new Error('X: not yet');
        if (n === 1 && (variant === 'always' || call === 1)) throw new PermanentError('Y: refused');
      },
      onOutcome: (event, outcome) => {
        if (outcome === 'applied') applied.push((event.data as { n: number }).n);
      },
    });
    t.after(() => consumer.close());
    await consumer.start();
    await eventually(async () => applied.includes(0), 30_000, "X's record after its retries");
    await new Promise((resolve) => setTimeout(resolve, 500));
    await consumer.close();
    assert.equal(calls.get(1), 1, "Y's record was tried once");
    assert.equal(deadLetters, 1, 'one dead letter reported');
    assert.deepEqual(applied.sort(), [0, 2], "Y's record is a dead letter, not applied as well");
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.dead_letters`);
    assert.equal(rows[0]?.n, 1);
  });
}
