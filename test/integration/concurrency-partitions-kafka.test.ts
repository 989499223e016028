// Partitions in parallel (issue 13, item 2) on the Kafka transport: `partitionsInFlight` batches of different
// partitions at once, one per partition. The client fetches only when no batch is in flight, and serves a rebalance
// inside a fetch, so a revocation comes between rounds of batches; the adapter still waits for the revoked
// partitions' batches before they go (docs/concurrency.md).
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { silentLogger } from '../../src/observability/logger.ts';
import { KafkaJS } from '../../src/transport/kafka/client.ts';
import { defaultBrokers } from '../../src/transport/kafka/config.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import type { IncomingRecord } from '../../src/transport/port.ts';
import { positionAfter } from '../../src/transport/position.ts';
import { eventually, randomName } from '../support/fixtures.ts';
import { gates } from '../support/gates.ts';
import { needs } from '../support/services.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The group's state as the coordinator tells it (the client's admin: the transport's has no such call). */
async function groupState(t: TestContext, group: string): Promise<() => Promise<number>> {
  const admin = new KafkaJS.Kafka({ kafkaJS: { brokers: defaultBrokers(), logLevel: KafkaJS.logLevel.ERROR } }).admin();
  await admin.connect();
  t.after(() => admin.disconnect());
  return async () => {
    const { groups } = (await admin.describeGroups([group])) as { groups: { state: number }[] };
    return groups[0]?.state ?? -1;
  };
}
/** ConsumerGroupStates.PREPARING_REBALANCE: a member joined, the coordinator waits for the others to rejoin. */
const PREPARING_REBALANCE = 1;

async function world(t: TestContext) {
  if (!(await needs(t, 'kafka'))) return undefined;
  const transport = kafkaTransport({
    clientId: 'concurrency-partitions',
    logger: silentLogger,
  });
  const admin = transport.admin();
  const topic = randomName('parts').replace('_', '-');
  await admin.createTopics([{ topic, partitions: 2 }]);
  t.after(async () => {
    await admin.deleteTopics([topic]).catch(() => undefined);
    await admin.close();
  });
  const producer = transport.producer();
  const send = (prefix: string, count: number) =>
    producer.send(
      Array.from({ length: count }, (_, n) => ({
        topic,
        key: `${prefix}${n}`,
        value: Buffer.from(String(n)),
        headers: {},
      })),
    );
  await send('k', 40);
  t.after(() => producer.close());
  return { transport, topic, send };
}

/** Member A with `inFlight` batches at once, each gated per partition; records what it saw and when it gave up. */
function memberA(w: NonNullable<Awaited<ReturnType<typeof world>>>, group: string, inFlight: number) {
  const gate = gates();
  const running = new Set<number>();
  let mostRunning = 0;
  const seen: IncomingRecord[] = [];
  const revokes: { partitions: number[]; runningThen: number[] }[] = [];
  let both = false;
  const consumer = w.transport.consumer({
    group,
    topics: [w.topic],
    maxBatchSize: 100,
    fromBeginning: true,
    partitionsInFlight: inFlight,
    onRevoke: async (partitions) =>
      void revokes.push({ partitions: partitions.map((p) => p.partition), runningThen: [...running] }),
  });
  let bothNow: () => void = () => undefined;
  const bothRunning = new Promise<void>((resolve) => {
    bothNow = resolve;
  });
  const started = consumer.run(async (batch, control) => {
    running.add(batch.partition);
    mostRunning = Math.max(mostRunning, running.size);
    if (running.size === 2) {
      both = true;
      bothNow();
    }
    // Batches run at once when one fetch brought both partitions. The client's first fetch takes one record (its
    // read-ahead then adapts): until both are in flight, batches go through ungated.
    if (!both) await Promise.race([bothRunning, sleep(1000)]);
    if (both) await gate.wait(batch.partition);
    running.delete(batch.partition);
    const last = batch.records.at(-1)!;
    seen.push(...batch.records);
    await consumer.commit([positionAfter(last)]);
    control.resolve(last.offset);
  });
  return { consumer, gate, running, seen, revokes, started, both: () => both, mostRunning: () => mostRunning };
}

describe('partitions in parallel (kafka transport)', () => {
  test('batches of two partitions in flight at once; a revocation waits for them; nothing lost or doubled', async (t) => {
    const w = await world(t);
    if (!w) return;
    const group = randomName('g');
    const a = memberA(w, group, 2);
    t.after(() => {
      a.gate.open(0);
      a.gate.open(1);
      return a.consumer.close();
    });
    await a.started;
    await eventually(async () => a.both(), 30_000, 'a batch of each partition in flight at once');

    const seenByB: IncomingRecord[] = [];
    const b = w.transport.consumer({ group, topics: [w.topic], maxBatchSize: 100, fromBeginning: true });
    t.after(() => b.close());
    await b.run(async (batch, control) => {
      const last = batch.records.at(-1)!;
      seenByB.push(...batch.records);
      await b.commit([positionAfter(last)]);
      control.resolve(last.offset);
    });
    // B has joined when the coordinator prepares a rebalance: from then on a revocation could come (the event that
    // makes the checks below able to fail, instead of a fixed wait).
    const state = await groupState(t, group);
    await eventually(async () => (await state()) === PREPARING_REBALANCE, 30_000, 'B to join (a rebalance prepared)');
    assert.equal(a.revokes.length, 0, 'no revocation while the batches are open');
    assert.equal(seenByB.length, 0, 'B reads nothing while A holds the partitions');
    a.gate.open(1);
    await eventually(async () => !a.running.has(1), 30_000, "partition 1's batch to finish");
    assert.equal(a.revokes.length, 0, "no revocation while partition 0's batch is open");
    assert.equal(await state(), PREPARING_REBALANCE, 'the group still waits for A');
    a.gate.open(0);
    await eventually(async () => a.revokes.length > 0, 30_000, 'partitions revoked from A');
    for (const revoke of a.revokes) {
      const open = revoke.partitions.filter((p) => revoke.runningThen.includes(p));
      assert.deepEqual(open, [], 'a revoked partition had no batch in flight when it went');
    }
    await eventually(async () => seenByB.length > 0 || a.seen.length >= 40, 30_000, 'B joined the work');
    await w.send('late', 20);
    await eventually(async () => a.seen.length + seenByB.length >= 60, 60_000, 'every record delivered');
    await Promise.all([a.consumer.close(), b.close()]);
    const offsets = [...a.seen, ...seenByB].map((r) => `${r.partition}:${r.offset}`);
    assert.equal(new Set(offsets).size, offsets.length, 'no record delivered twice');
    assert.equal(a.seen.length + seenByB.length, 60, 'every record delivered once');
  });

  test('partitionsInFlight that is not a positive integer is refused with EFF_INVALID_OPTIONS', (t) => {
    const transport = kafkaTransport({ logger: silentLogger });
    for (const partitionsInFlight of [0, -1, 1.5, Number.NaN]) {
      assert.throws(
        () =>
          transport.consumer({ group: 'g', topics: ['t'], maxBatchSize: 1, fromBeginning: true, partitionsInFlight }),
        (error: { code?: string; details?: { field?: string } }) =>
          error.code === 'EFF_INVALID_OPTIONS' && error.details?.field === 'partitionsInFlight',
        `partitionsInFlight ${partitionsInFlight}`,
      );
    }
    t.diagnostic('0, -1, 1.5 and NaN refused');
  });

  test('naive twin: one batch at a time never has two partitions in flight', async (t) => {
    const w = await world(t);
    if (!w) return;
    const a = memberA(w, randomName('g'), 1);
    t.after(() => {
      a.gate.open(0);
      a.gate.open(1);
      return a.consumer.close();
    });
    // The gates open from the start: a second batch in flight, were there one, would pass and be counted.
    a.gate.open(0);
    a.gate.open(1);
    await a.started;
    // Both partitions' records are all handled: batches of each came, one after the other.
    await eventually(async () => a.seen.length === 40, 30_000, 'every record');
    assert.deepEqual(new Set(a.seen.map((r) => r.partition)), new Set([0, 1]), 'batches of both partitions');
    assert.equal(a.mostRunning(), 1, 'with partitionsInFlight 1 never two batches in flight');
  });
});
