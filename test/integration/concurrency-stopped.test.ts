// Keys in parallel with `deadLetters: false`: a record that exhausts its attempts stops its partition. Another lane of
// the same batch backing off (its own retry timer) used to resume the stopped partition: the record ran past
// maxAttempts and onStopped fired again and again; and each lane's timer resumed the partition at its own time, so
// the earliest cut the others' backoffs short. Now one timer per partition (the latest due time wins) and a stopped
// partition is never resumed by one. Real PostgreSQL, the postgres transport.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { embeddedLog, sendKeyed } from '../support/embedded-log.ts';
import { eventually } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

test('keys in parallel: a stopped partition stays stopped while another lane backs off; maxAttempts holds', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { consumerOf, transport } = await embeddedLog(t);
  const topic = 'orders';
  await sendKeyed(transport, topic, ['X', 'Y', 'Z']);
  const calls = new Map<number, number>();
  const stops: string[] = [];
  const consumer = createConsumer({
    ...consumerOf(topic),
    concurrency: { mode: 'key', max: 4 },
    deadLetters: false,
    maxAttempts: 2,
    retry: { baseMs: 100, capMs: 200 },
    onStopped: (record) => stops.push(record.offset),
    handler: async (event) => {
      const { n } = event.data as { n: number };
      const call = (calls.get(n) ?? 0) + 1;
      calls.set(n, call);
      if (n === 0) throw new Error('X: always fails');
      if (n === 1 && call <= 6) throw new Error('Y: fails for a while');
    },
  });
  t.after(() => consumer.close());
  await consumer.start();
  await eventually(async () => stops.length > 0, 30_000, 'the partition to stop');
  await new Promise((resolve) => setTimeout(resolve, 2000)); // several of the lanes' backoffs (100-200 ms)
  await consumer.close();
  assert.equal(calls.get(0), 2, "X's record ran exactly maxAttempts times");
  assert.equal(stops.length, 1, 'onStopped once');
  assert.ok((calls.get(1) ?? 0) <= 2, `Y's record is not retried past the stop (${calls.get(1)} calls)`);
});
