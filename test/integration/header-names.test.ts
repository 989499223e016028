// A header's name is the producer's data, whatever it is: names JavaScript objects treat apart (`__proto__`,
// `constructor`, `toString`) go to the broker as they were given, with their bytes. Real broker. Before the fix the
// Kafka producer copied the headers into a plain object, where `__proto__` set the prototype instead: with a string
// value the header was dropped without a word (the broker's log segment held headerKeys [constructor, x]), with a
// Buffer value the send failed with a TypeError (this test's failure then). The client's read cannot show a header
// named `__proto__` (its native code sets it on a plain object too, docs/kafka.md), so this test reads the other names
// back; the segment held [__proto__, constructor, x] for both records after the fix (kafka.tools.DumpLogSegments).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { freshTopic } from '../support/fixtures.ts';
import { readTopic } from '../support/read-topic.ts';
import { needs } from '../support/services.ts';

test('headers named __proto__, constructor, toString are sent as given (string and Buffer values)', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const { transport, topic } = await freshTopic(t, 1);
  // As the relay reads them from the outbox's jsonb, and as a record from another producer hands them on.
  const strings: Record<string, string> = JSON.parse('{"__proto__":"p","constructor":"c","toString":"s","x":"y"}');
  const buffers: Record<string, Buffer> = Object.create(null);
  for (const [name, value] of Object.entries(strings)) buffers[name] = Buffer.from(`${value}\u00ff`, 'latin1');
  const producer = transport.producer();
  await producer.connect();
  t.after(() => producer.close());
  await producer.send([
    { topic, key: 'strings', value: Buffer.from('1'), headers: strings },
    { topic, key: 'buffers', value: Buffer.from('2'), headers: buffers },
  ]);
  const records = await readTopic(transport, topic, 2);
  const names = ['constructor', 'toString', 'x'];
  const seen = records.map((record) =>
    names.map((name) => `${name}=${Buffer.from(record.headers[name] as Buffer).toString('hex')}`),
  );
  const hex = (s: string, encoding: BufferEncoding = 'utf8') => Buffer.from(s, encoding).toString('hex');
  assert.deepEqual(seen, [
    names.map((name) => `${name}=${hex(strings[name]!)}`),
    names.map((name) => `${name}=${hex(`${strings[name]!}\u00ff`, 'latin1')}`),
  ]);
});
