// Several partitions in flight on the Kafka transport (issue 13). Two hazards, each with its naive twin
// (docs/dev/development.md, "Several partitions at once"). Real broker.
// 1. An offset commit request per batch: when batches come faster than the group coordinator answers commits (small
//    batches, several partitions in flight, a busy broker), the member's heartbeats queue behind the commits on the
//    same connection until its session times out; the member loses every partition and gets no records until it has
//    rejoined behind the backlog (the end-to-end benchmark's "events that never arrived" of the first try with three
//    partitions in flight; one at a time stalls too, given the rate). The transport coalesces commits
//    (offset-committer.ts: at most one request per interval) and keeps its partitions.
// 2. A pause from outside the partition's own batch: the client drops what it had read ahead for a paused partition and
//    seeks back only partitions it knows a resolved offset of, so records never handed out are skipped for good. The
//    consumer pauses each partition from inside its own batch, which the client seeks back.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CODES, KafkaJS } from '../../src/transport/kafka/client.ts';
import { defaultBrokers } from '../../src/transport/kafka/config.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import type { TopicPartition } from '../../src/transport/port.ts';
import { positionAfter } from '../../src/transport/position.ts';
import { randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const PARTITIONS = 6;
const PER_PARTITION = 100;
/** Records sent to each partition once the holds are over: the group's offsets then move past what came before. */
const TAIL = 10;
const TOTAL = PARTITIONS * (PER_PARTITION + TAIL);
/** A member-wide pause starts when this many records are done (three holds of 200 ms over the run). */
const HOLD_AT = [30, 250, 450];
const HOLD_MS = 200;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A fresh topic of six partitions holding `PER_PARTITION` records each, and how to delete it. Delete it after the
 * test's consumer is closed: a consumer still subscribed asks for the topic's metadata and the broker (which creates
 * topics on demand) brings it back.
 */
async function preloadedTopic(): Promise<Fresh> {
  const transport = kafkaTransport({ clientId: 'effectively-test' });
  const admin = transport.admin();
  const topic = randomName('inflight').replace('_', '-');
  await admin.createTopics([{ topic, partitions: PARTITIONS }]);
  await send(topic, 0, PER_PARTITION);
  return { topic, drop: () => dropTopic(admin, topic) };
}

interface Fresh {
  topic: string;
  drop(): Promise<void>;
}

async function dropTopic(admin: ReturnType<ReturnType<typeof kafkaTransport>['admin']>, topic: string): Promise<void> {
  await admin.deleteTopics([topic]).catch(() => undefined);
  await admin.close();
}

/** Sends `count` records to every partition, numbered from `from`. */
async function send(topic: string, from: number, count: number): Promise<void> {
  // Records are placed by partition number (keys would depend on the partitioner): the client's producer is told.
  const producer = clientKafka().producer({ kafkaJS: { acks: -1 } });
  await producer.connect();
  for (let partition = 0; partition < PARTITIONS; partition++) {
    await producer.send({
      topic,
      messages: Array.from({ length: count }, (_, n) => ({ partition, value: `${partition}-${from + n}` })),
    });
  }
  await producer.disconnect();
}

function clientKafka() {
  return new KafkaJS.Kafka({
    kafkaJS: { brokers: defaultBrokers(), clientId: 'effectively-test', logLevel: KafkaJS.logLevel.ERROR },
  });
}

/** Offsets handled (resolved) per partition. */
function tally() {
  const done = new Map<number, Set<bigint>>();
  return {
    add(partition: number, offsets: Iterable<string>) {
      const set = done.get(partition) ?? new Set<bigint>();
      done.set(partition, set);
      for (const offset of offsets) set.add(BigInt(offset));
    },
    get size() {
      let n = 0;
      for (const set of done.values()) n += set.size;
      return n;
    },
    missing(): { partition: number; offset: bigint }[] {
      const out: { partition: number; offset: bigint }[] = [];
      for (let partition = 0; partition < PARTITIONS; partition++) {
        for (let offset = 0n; offset < BigInt(PER_PARTITION + TAIL); offset++) {
          if (!done.get(partition)?.has(offset)) out.push({ partition, offset });
        }
      }
      return out;
    },
  };
}

/** Waits until `want` records are done, or nothing new was done for `quietMs` (how a loss ends), or `timeoutMs`. */
async function settle(done: { size: number }, want: number, quietMs: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = -1;
  let since = Date.now();
  while (done.size < want && Date.now() < deadline) {
    await sleep(100);
    if (done.size !== last) {
      last = done.size;
      since = Date.now();
    } else if (Date.now() - since > quietMs) return;
  }
}

/** Records of the commit-flood cases: one batch (and, naively, one commit request) each. */
const FLOOD_RECORDS = 6000;
const FLOOD_PARTITIONS = 3;
/** Kafka's least session timeout: a member whose heartbeats go unanswered this long loses its partitions. */
const SESSION_MS = 6000;

/** A fresh topic of `FLOOD_PARTITIONS` partitions holding `FLOOD_RECORDS` records, and how to delete it. */
async function floodTopic(): Promise<Fresh> {
  const transport = kafkaTransport({ clientId: 'effectively-test' });
  const admin = transport.admin();
  const topic = randomName('flood').replace('_', '-');
  await admin.createTopics([{ topic, partitions: FLOOD_PARTITIONS }]);
  const producer = clientKafka().producer({ kafkaJS: { acks: -1 } });
  await producer.connect();
  for (let from = 0; from < FLOOD_RECORDS; from += 2000) {
    await producer.send({
      topic,
      messages: Array.from({ length: 2000 }, (_, n) => ({ partition: (from + n) % FLOOD_PARTITIONS, value: 'x' })),
    });
  }
  await producer.disconnect();
  return { topic, drop: () => dropTopic(admin, topic) };
}

describe('several partitions in flight: offset commits (Kafka transport)', () => {
  test('a commit per batch of one record, three partitions in flight: the member keeps its partitions', async (t) => {
    if (!(await needs(t, 'kafka'))) return;
    const { topic, drop } = await floodTopic();
    const revoked: number[] = [];
    const consumer = kafkaTransport({ clientId: 'effectively-test' }).consumer({
      group: randomName('g'),
      topics: [topic],
      maxBatchSize: 1,
      fromBeginning: true,
      partitionsInFlight: 3,
      sessionTimeoutMs: SESSION_MS,
      onRevoke: async (partitions) => void revoked.push(...partitions.map((p) => p.partition)),
    });
    t.after(async () => {
      await consumer.close();
      await drop();
    });
    // Every request the transport hands the client, counted where it hands it over.
    let transportRequests = 0;
    const client = (consumer as unknown as { clientConsumer: { commitOffsets: (...args: unknown[]) => Promise<void> } })
      .clientConsumer;
    const commitOffsets = client.commitOffsets.bind(client);
    client.commitOffsets = (...args: unknown[]) => {
      transportRequests += 1;
      return commitOffsets(...args);
    };
    let handled = 0;
    await consumer.run(async (batch, control) => {
      const last = batch.records.at(-1)!;
      handled += batch.records.length;
      // As the consumer does: the commit goes off the batch's path.
      consumer.commit([positionAfter(last)]).catch(() => undefined);
      control.resolve(last.offset);
    });
    const deadline = Date.now() + 60_000;
    while (handled < FLOOD_RECORDS && Date.now() < deadline) await sleep(100);
    // Longer than a session: a member starved of heartbeats would lose its partitions meanwhile.
    await sleep(2 * SESSION_MS);
    t.diagnostic(
      `handled ${handled} of ${FLOOD_RECORDS}; ${transportRequests} commit requests; revoked ${revoked.length} partition(s)`,
    );
    assert.equal(handled, FLOOD_RECORDS);
    assert.ok(transportRequests < FLOOD_RECORDS / 10, 'commits coalesced: far fewer requests than batches');
    assert.deepEqual(revoked, [], 'no partition revoked while the member was alone in its group');
  });

  test('naive twin: a commit request per batch floods the coordinator and the member loses its partitions', async (t) => {
    if (!(await needs(t, 'kafka'))) return;
    const { topic, drop } = await floodTopic();
    const lost: boolean[] = [];
    const client = clientKafka().consumer({
      kafkaJS: { groupId: randomName('g'), fromBeginning: true, autoCommit: false },
      'js.consumer.max.batch.size': 1,
      'session.timeout.ms': SESSION_MS,
      'heartbeat.interval.ms': 1000,
      rebalance_cb: (error: { code: number }, _assignment: unknown, fns: { assignmentLost(): boolean }) => {
        if (error.code === CODES.ERRORS.ERR__REVOKE_PARTITIONS) lost.push(fns.assignmentLost());
      },
    });
    await client.connect();
    t.after(async () => {
      await client.disconnect();
      await drop();
    });
    await client.subscribe({ topics: [topic] });
    let handled = 0;
    let naiveRequests = 0;
    await client.run({
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 3,
      eachBatch: async ({ batch, resolveOffset }) => {
        const last = batch.messages.at(-1)!;
        handled += batch.messages.length;
        // The first try's pattern: one commit request per batch (it resolves once librdkafka queued it).
        naiveRequests += 1;
        await client.commitOffsets([{ topic, partition: batch.partition, offset: String(BigInt(last.offset) + 1n) }]);
        resolveOffset(last.offset);
      },
    });
    const deadline = Date.now() + 60_000;
    while (lost.length === 0 && handled < FLOOD_RECORDS && Date.now() < deadline) await sleep(100);
    // Done early, or not: a member starved of heartbeats loses its partitions within a session after the flood.
    const sessionLater = Date.now() + 2 * SESSION_MS;
    while (!lost.includes(true) && Date.now() < sessionLater) await sleep(100);
    t.diagnostic(
      `handled ${handled} of ${FLOOD_RECORDS}; ${naiveRequests} commit requests; assignment lost: ${lost.includes(true)}`,
    );
    // Whether the coordinator falls behind depends on the broker's speed: on this shared machine it answers ~170
    // commits/s and the member loses its session. On a broker fast enough to keep up this twin fails: it cannot show
    // the hazard there (it used to pass on the count of requests, which is one per batch by construction).
    assert.ok(lost.includes(true), `expected the assignment lost under ${naiveRequests} commit requests`);
  });
});

describe('several partitions in flight: pause (Kafka transport)', () => {
  test('each partition paused from its own batch, half-resolved and sought back while others run: nothing lost', async (t) => {
    if (!(await needs(t, 'kafka'))) return;
    const { topic, drop } = await preloadedTopic();
    const transport = kafkaTransport({ clientId: 'effectively-test' });
    const consumer = transport.consumer({
      group: randomName('g'),
      topics: [topic],
      maxBatchSize: 10,
      fromBeginning: true,
      partitionsInFlight: 3,
    });
    t.after(async () => {
      await consumer.close();
      await drop();
    });
    const done = tally();
    let batches = 0;
    let inFlight = 0;
    let mostInFlight = 0;
    let holds = 0;
    let holding = false;
    const held = new Map<number, TopicPartition>();
    await consumer.run(async (batch, control) => {
      batches += 1;
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      try {
        await sleep(5);
        if (holding) {
          // The member-wide pause done right: the partition pauses itself, nothing resolved (all fetched again).
          held.set(batch.partition, { topic, partition: batch.partition });
          control.pause();
          return;
        }
        const records = batch.records;
        // Every third batch: the first half resolved, the partition paused and resumed 50 ms later (the consumer's
        // in-place retry): the client seeks it back to the first unresolved record while other batches run.
        const half = batches % 3 === 0 && records.length > 1;
        const upTo = half ? records.slice(0, Math.floor(records.length / 2)) : records;
        const last = upTo.at(-1)!;
        done.add(
          batch.partition,
          upTo.map((r) => r.offset),
        );
        await consumer.commit([positionAfter(last)]);
        control.resolve(last.offset);
        if (half) {
          control.pause();
          setTimeout(() => consumer.resume([{ topic, partition: batch.partition }]), 50);
        }
        if (holds < HOLD_AT.length && done.size >= HOLD_AT[holds]!) {
          holds += 1;
          holding = true;
          setTimeout(() => {
            holding = false;
            const partitions = [...held.values()];
            held.clear();
            if (partitions.length > 0) consumer.resume(partitions);
          }, HOLD_MS);
        }
      } finally {
        inFlight -= 1;
      }
    });
    await settle(done, PARTITIONS * PER_PARTITION, 10_000, 60_000);
    await send(topic, PER_PARTITION, TAIL);
    await settle(done, TOTAL, 10_000, 30_000);
    const missing = done.missing();
    t.diagnostic(
      `done ${done.size} of ${TOTAL} in ${batches} batches, at most ${mostInFlight} in flight, ${holds} holds`,
    );
    assert.equal(holds, HOLD_AT.length);
    assert.deepEqual(missing.slice(0, 10), [], `${missing.length} records never handled`);
  });

  test('naive twin: every partition paused at once from one batch loses records below the committed offset', async (t) => {
    if (!(await needs(t, 'kafka'))) return;
    const { topic, drop } = await preloadedTopic();
    const kafka = clientKafka();
    const group = randomName('g');
    const client = kafka.consumer({
      kafkaJS: { groupId: group, fromBeginning: true, autoCommit: false },
      'js.consumer.max.batch.size': 10,
    });
    await client.connect();
    t.after(async () => {
      await client.disconnect();
      await drop();
    });
    await client.subscribe({ topics: [topic] });
    const done = tally();
    const all = [{ topic, partitions: Array.from({ length: PARTITIONS }, (_, n) => n) }];
    let holds = 0;
    await client.run({
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 3,
      eachBatch: async ({ batch, resolveOffset }) => {
        await sleep(5);
        const last = batch.messages.at(-1)!;
        done.add(
          batch.partition,
          batch.messages.map((m) => m.offset),
        );
        await client.commitOffsets([
          { topic, partition: batch.partition, offset: (BigInt(last.offset) + 1n).toString() },
        ]);
        resolveOffset(last.offset);
        if (holds < HOLD_AT.length && done.size >= HOLD_AT[holds]!) {
          // The short way: this batch pauses the whole member, other partitions included, and resumes it later.
          holds += 1;
          client.pause(all);
          setTimeout(() => client.resume(all), HOLD_MS);
        }
      },
    });
    await settle(done, PARTITIONS * PER_PARTITION, 4000, 30_000);
    await send(topic, PER_PARTITION, TAIL);
    // The tail is handled and committed: the group's offsets pass the records the client dropped.
    await settle(done, TOTAL, 4000, 30_000);
    const admin = kafkaTransport({ clientId: 'effectively-test' }).admin();
    t.after(() => admin.close());
    const committed = new Map(
      (await admin.committedOffsets(group, topic)).map((tp) => [tp.partition, BigInt(tp.offset)] as const),
    );
    const missing = done.missing();
    // Lost for good: not handled, yet below the offset the group committed (a restart will not bring it back).
    const lost = missing.filter(({ partition, offset }) => offset < (committed.get(partition) ?? -1n));
    t.diagnostic(
      `done ${done.size} of ${TOTAL}; ${missing.length} never handled, ${lost.length} below the committed offset`,
    );
    assert.ok(lost.length > 0, `expected records skipped below the committed offset, got ${missing.length} missing`);
  });
});
