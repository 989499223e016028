// scripts/kafka.sh kill + start: the broker dies as in a crash (SIGKILL) and comes back with what it acknowledged.
// The chaos kit's --restart-broker relies on it. A private broker on free ports, never the shared one on 9092.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import { silentLogger } from '../../src/observability/logger.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { eventually, randomName } from '../support/fixtures.ts';
import { freePorts, kafkaScript } from '../support/kafka-script.ts';

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

test('a SIGKILLed broker comes back with its data: kafka.sh kill, then kafka.sh start', async (t) => {
  const port = await freePorts(2);
  const kafka = kafkaScript(t, { KAFKA_PORT: String(port), KAFKA_CONTROLLER_PORT: String(port + 1) });
  if (!kafka) return;
  kafka.run(['start']);
  assert.match(kafka.run(['status']).stdout, new RegExp(`^running pid=\\d+ port=${port}`));

  const transport = kafkaTransport({ brokers: [`127.0.0.1:${port}`], logger: silentLogger });
  const topic = randomName('restart').replace('_', '-');
  const admin = transport.admin();
  await admin.createTopics([{ topic, partitions: 3 }]);
  await admin.close();
  const before = transport.producer();
  const keys = Array.from({ length: 100 }, (_, n) => `k${n}`);
  await before.send(keys.map((key) => ({ topic, key, value: Buffer.from(key), headers: {} })));
  await before.close();

  assert.match(kafka.run(['kill']).stderr, /killed \(SIGKILL/);
  // Really dead: the script says so and nothing accepts on the port.
  const status = kafka.run(['status'], true);
  assert.equal(status.status, 1, status.stdout);
  assert.equal(status.stdout.trim(), 'stopped');
  assert.equal(await accepts(port), false, 'the killed broker still accepts connections');

  // `start` returns once the broker serves: a send and a full read work at once.
  kafka.run(['start']);
  const after = transport.producer();
  t.after(() => after.close());
  await after.send([{ topic, key: 'after', value: Buffer.from('after'), headers: {} }]);
  const seen = new Set<string>();
  const consumer = transport.consumer({
    group: randomName('g'),
    topics: [topic],
    maxBatchSize: 500,
    fromBeginning: true,
  });
  t.after(() => consumer.close());
  await consumer.run(async (batch, control) => {
    for (const record of batch.records) seen.add(record.key?.toString() ?? '');
    control.resolve(batch.records.at(-1)!.offset);
  });
  await eventually(async () => seen.size >= 101, 60_000, 'the records acknowledged before the kill, and one after');
  assert.deepEqual([...seen].sort(), [...keys, 'after'].sort());
});
