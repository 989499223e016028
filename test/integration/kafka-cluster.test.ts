// Topics the library creates take the cluster's replication factor, on a real three-node cluster started by
// `scripts/kafka.sh start --nodes 3` (private ports and data; stopped afterwards), and survive one SIGKILLed node.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { silentLogger } from '../../src/observability/logger.ts';
import { KafkaJS } from '../../src/transport/kafka/client.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { eventually, randomName } from '../support/fixtures.ts';
import { freePorts, kafkaScript } from '../support/kafka-script.ts';

async function fetchReplicas(brokers: string[], topic: string): Promise<number[]> {
  const admin = new KafkaJS.Kafka({ kafkaJS: { brokers, logLevel: KafkaJS.logLevel.NOTHING } }).admin();
  await admin.connect();
  try {
    const [metadata] = (await admin.fetchTopicMetadata({ topics: [topic] })) as unknown as {
      partitions: { replicas: number[] }[];
    }[];
    return metadata!.partitions.map((partition) => partition.replicas.length);
  } finally {
    await admin.disconnect();
  }
}

/** Replicas of each partition, once every broker knows the new topic (metadata reaches them shortly after). */
async function replicasPerPartition(brokers: string[], topic: string): Promise<number[]> {
  let replicas: number[] = [];
  await eventually(
    async () => {
      replicas = await fetchReplicas(brokers, topic).catch(() => []);
      return replicas.length > 0;
    },
    30_000,
    `metadata of ${topic}`,
  );
  return replicas;
}

test('on a three-node cluster the library creates topics with the cluster default (3 replicas), and they outlive a dead node', async (t) => {
  const base = await freePorts(6);
  const kafka = kafkaScript(t, { KAFKA_CLUSTER_PORT: String(base) }, ['--nodes', '3']);
  if (!kafka) return;
  kafka.run(['start', '--nodes', '3']);
  const brokers = kafka.run(['brokers', '--nodes', '3']).stdout.trim().split(',');
  assert.deepEqual(
    brokers,
    [0, 2, 4].map((offset) => `127.0.0.1:${base + offset}`),
  );

  const topic = randomName('replicated').replace('_', '-');
  const transport = kafkaTransport({ brokers, logger: silentLogger });
  const admin = transport.admin();
  t.after(() => admin.close());
  await admin.createTopics([{ topic, partitions: 3 }]);
  assert.deepEqual(await replicasPerPartition(brokers, topic), [3, 3, 3]);

  // Naive twin: the old hard-coded factor (as an explicit option now) gives one replica: the test sees the difference.
  const single = randomName('single').replace('_', '-');
  const pinned = kafkaTransport({ brokers, logger: silentLogger, replicationFactor: 1 }).admin();
  t.after(() => pinned.close());
  await pinned.createTopics([{ topic: single, partitions: 3 }]);
  assert.deepEqual(await replicasPerPartition(brokers, single), [1, 1, 1]);

  // One node SIGKILLed: acks=all sends still succeed (min.insync.replicas=2) and every record is read back.
  assert.match(kafka.run(['kill-node', '3']).stderr, /node 3 killed/);
  const status = kafka.run(['status', '--nodes', '3'], true);
  assert.match(status.stdout, /node 3 stopped/);
  assert.equal(status.status, 1);
  const producer = transport.producer();
  t.after(() => producer.close());
  const keys = Array.from({ length: 30 }, (_, n) => `k${n}`);
  await producer.send(keys.map((key) => ({ topic, key, value: Buffer.from(key), headers: {} })));
  const seen = new Set<string>();
  const consumer = transport.consumer({
    group: randomName('g'),
    topics: [topic],
    maxBatchSize: 100,
    fromBeginning: true,
  });
  t.after(() => consumer.close());
  await consumer.run(async (batch, control) => {
    for (const record of batch.records) seen.add(record.key?.toString() ?? '');
    control.resolve(batch.records.at(-1)!.offset);
  });
  await eventually(async () => seen.size >= keys.length, 60_000, 'the records sent with one node dead');
  assert.deepEqual([...seen].sort(), [...keys].sort());
});
