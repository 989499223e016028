// Many sends at once on one Kafka producer (a service whose requests each write through the same producer, a relay
// with batches in flight). Each send listened to the client's `event.error` on its own: past 10 at once Node printed
// MaxListenersExceededWarning ("possible EventEmitter memory leak") on the first day. Now one listener per client
// tells every send in flight. Real broker.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { freshTopic } from '../support/fixtures.ts';
import { readTopic } from '../support/read-topic.ts';
import { needs } from '../support/services.ts';

const AT_ONCE = 25;

test(`${AT_ONCE} sends at once on one producer: all written, no listener-leak warning`, async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const { topic, transport } = await freshTopic(t, 1);
  const producer = transport.producer();
  t.after(() => producer.close());
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));
  const record = (n: number) => ({ topic, key: Buffer.from(`k${n}`), value: Buffer.from(String(n)), headers: {} });
  await producer.send([record(-1)]); // connected
  await Promise.all(Array.from({ length: AT_ONCE }, (_, n) => producer.send([record(n)])));
  await new Promise((resolve) => setImmediate(resolve)); // a warning is emitted on the next tick
  assert.deepEqual(warnings, []);
  const values = (await readTopic(transport, topic, AT_ONCE + 1)).map((r) => Number(String(r.value)));
  assert.deepEqual(
    values.sort((a, b) => a - b),
    Array.from({ length: AT_ONCE + 1 }, (_, n) => n - 1),
  );
});
