// The chaos kit on a three-node cluster (a private one: scripts/kafka.sh --nodes 3 with its own ports and data,
// stopped afterwards): one node SIGKILLed mid-run and never started again, and the run still completes with nothing
// lost or doubled — the kit's topic takes the cluster's replication factor (3). Naive twin: a topic with one replica
// per partition, written before the same kill, cannot give back the records of the dead node's partitions.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runChaos } from '../../scenarios/chaos/run.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { sleep } from '../../src/observability/sleep.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { randomName } from '../support/fixtures.ts';
import { freePorts, kafkaScript } from '../support/kafka-script.ts';
import { needs } from '../support/services.ts';

test('three nodes, one SIGKILLed for good mid-run: the chaos run completes, nothing lost, nothing twice', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const base = await freePorts(6);
  const kafka = kafkaScript(t, { KAFKA_CLUSTER_PORT: String(base) }, ['--nodes', '3']);
  if (!kafka) return;
  kafka.run(['start', '--nodes', '3']);
  const brokers = kafka.run(['brokers', '--nodes', '3']).stdout.trim().split(',');

  // The twin: one replica per partition (the old hard-coded factor), written while every node is up.
  const single = randomName('single-replica').replace('_', '-');
  const pinned = kafkaTransport({ brokers, logger: silentLogger, replicationFactor: 1 });
  const pinnedAdmin = pinned.admin();
  kafka.closeFirst(() => pinnedAdmin.close());
  await pinnedAdmin.createTopics([{ topic: single, partitions: 6 }]);
  const producer = pinned.producer();
  kafka.closeFirst(() => producer.close());
  const keys = Array.from({ length: 60 }, (_, n) => `k${n}`);
  await producer.send(keys.map((key) => ({ topic: single, key, value: Buffer.from(key), headers: {} })));

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
  const seen = new Set<string>();
  const consumer = pinned.consumer({
    group: randomName('twin'),
    topics: [single],
    maxBatchSize: 100,
    fromBeginning: true,
  });
  kafka.closeFirst(() => consumer.close());
  await consumer.run(async (batch, control) => {
    for (const record of batch.records) seen.add(record.key?.toString() ?? '');
    control.resolve(batch.records.at(-1)!.offset);
  });
  // The live nodes' partitions arrive, then nothing more for 3 s (at most 20 s in all): the dead node's never come.
  const until = Date.now() + 20_000;
  let last = { size: 0, at: Date.now() };
  while (seen.size < keys.length && Date.now() < until && (seen.size === 0 || Date.now() - last.at < 3000)) {
    await sleep(200);
    if (seen.size !== last.size) last = { size: seen.size, at: Date.now() };
  }
  assert.ok(seen.size > 0 && seen.size < keys.length, `the one-replica twin gave back ${seen.size} of ${keys.length}`);
});
