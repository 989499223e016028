// One private three-node cluster (scripts/kafka.sh start --nodes 3: its own ports and data, stopped afterwards) for
// every claim made on a cluster; starting one costs ~30 s here, so the claims share it and run in this order:
// 1. topics the library creates take the cluster's replication factor (3); the naive twin, the old hard-coded factor
//    as an explicit `replicationFactor: 1`, gives one replica;
// 2. the chaos kit with node 2 SIGKILLed for good mid-run completes with nothing lost or doubled; its twin, a topic of
//    one replica per partition written before the kill, cannot give back the dead node's partitions;
// 3. with node 2 still dead, acks=all sends to the replicated topic of (1) succeed (min.insync.replicas=2) and every
//    record is read back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runChaos } from '../../scenarios/chaos/run.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { sleep } from '../../src/observability/sleep.ts';
import { KafkaJS } from '../../src/transport/kafka/client.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import type { Transport } from '../../src/transport/port.ts';
import { eventually, randomName } from '../support/fixtures.ts';
import { freePorts, type KafkaScript, kafkaScript } from '../support/kafka-script.ts';
import { needs } from '../support/services.ts';

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

/** Keys of every record a fresh group reads from `topic`, as they arrive (the consumer closes before the cluster). */
async function readKeys(kafka: KafkaScript, transport: Transport, topic: string): Promise<Set<string>> {
  const seen = new Set<string>();
  const consumer = transport.consumer({
    group: randomName('g'),
    topics: [topic],
    maxBatchSize: 100,
    fromBeginning: true,
  });
  kafka.closeFirst(() => consumer.close());
  await consumer.run(async (batch, control) => {
    for (const record of batch.records) seen.add(record.key?.toString() ?? '');
    control.resolve(batch.records.at(-1)!.offset);
  });
  return seen;
}

const keys = (count: number) => Array.from({ length: count }, (_, n) => `k${n}`);

test('a three-node cluster: replicated topics, a node SIGKILLed for good mid-run, acks=all with a node dead', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const base = await freePorts(6);
  const kafka = kafkaScript(t, { KAFKA_CLUSTER_PORT: String(base) }, ['--nodes', '3']);
  if (!kafka) return;
  kafka.run(['start', '--nodes', '3']);
  const brokers = kafka.run(['brokers', '--nodes', '3']).stdout.trim().split(',');
  assert.deepEqual(
    brokers,
    [0, 2, 4].map((offset) => `127.0.0.1:${base + offset}`),
  );
  const transport = kafkaTransport({ brokers, logger: silentLogger });
  const pinned = kafkaTransport({ brokers, logger: silentLogger, replicationFactor: 1 });
  const replicated = randomName('replicated').replace('_', '-');

  await t.test('the library creates topics with the cluster default (3 replicas); the pinned twin with 1', async () => {
    const admin = transport.admin();
    kafka.closeFirst(() => admin.close());
    await admin.createTopics([{ topic: replicated, partitions: 3 }]);
    assert.deepEqual(await replicasPerPartition(brokers, replicated), [3, 3, 3]);
    const single = randomName('single').replace('_', '-');
    const pinnedAdmin = pinned.admin();
    kafka.closeFirst(() => pinnedAdmin.close());
    await pinnedAdmin.createTopics([{ topic: single, partitions: 3 }]);
    assert.deepEqual(await replicasPerPartition(brokers, single), [1, 1, 1]);
  });

  await t.test('node 2 SIGKILLed for good mid-run: the chaos run completes, nothing lost, nothing twice', async () => {
    // The twin: one replica per partition, written while every node is up.
    const single = randomName('single-replica').replace('_', '-');
    const pinnedAdmin = pinned.admin();
    kafka.closeFirst(() => pinnedAdmin.close());
    await pinnedAdmin.createTopics([{ topic: single, partitions: 6 }]);
    const producer = pinned.producer();
    kafka.closeFirst(() => producer.close());
    const written = keys(60);
    await producer.send(written.map((key) => ({ topic: single, key, value: Buffer.from(key), headers: {} })));

    const lines: string[] = [];
    const result = await runChaos({
      events: 3000,
      kills: 2,
      rate: 1000,
      brokers: { nodes: 3, env: kafka.env },
      killBrokerForGood: 2,
      timeoutMs: 120_000,
      log: (line) => lines.push(line),
    });
    const said = lines.join('\n');
    assert.equal(result.brokerKilledForGood, 2, said);
    assert.match(said, /^chaos: killed broker node 2 for good \(SIGKILL; not started again\)$/m);
    assert.equal(result.crashes, 0, said);
    assert.ok(result.kills >= 2, said);
    assert.deepEqual([result.orders, result.lost, result.duplicated, result.pending], [3000, 0, 0, 0], said);
    // Never started again: node 2 is still down after the run.
    assert.match(kafka.run(['status', '--nodes', '3'], true).stdout, /node 2 stopped/);

    // The twin's records on node 2's partitions are gone with it (offline): fewer come back than were written.
    const seen = await readKeys(kafka, pinned, single);
    // The live nodes' partitions arrive, then nothing more for 3 s (at most 20 s in all): the dead node's never come.
    const until = Date.now() + 20_000;
    let last = { size: 0, at: Date.now() };
    while (seen.size < written.length && Date.now() < until && (seen.size === 0 || Date.now() - last.at < 3000)) {
      await sleep(200);
      if (seen.size !== last.size) last = { size: seen.size, at: Date.now() };
    }
    assert.ok(seen.size > 0 && seen.size < written.length, `the one-replica twin gave back ${seen.size} of 60`);
  });

  await t.test('with a node dead, acks=all sends to the replicated topic succeed and are all read back', async () => {
    // Node 2 is dead since the chaos run; should that run have stopped before its kill, the node dies here.
    const status = kafka.run(['status', '--nodes', '3'], true);
    if (!/node 2 stopped/.test(status.stdout)) assert.match(kafka.run(['kill-node', '2']).stderr, /node 2 killed/);
    assert.equal(kafka.run(['status', '--nodes', '3'], true).status, 1);
    const producer = transport.producer();
    kafka.closeFirst(() => producer.close());
    const written = keys(30);
    await producer.send(written.map((key) => ({ topic: replicated, key, value: Buffer.from(key), headers: {} })));
    const seen = await readKeys(kafka, transport, replicated);
    await eventually(async () => seen.size >= written.length, 60_000, 'the records sent with one node dead');
    assert.deepEqual([...seen].sort(), [...written].sort());
  });
});
