// Review of c050791 (offset commits off the batch's path): is the transport consumer's close() bounded when the broker
// does not answer? close() sends the noted positions as a final commit. The Confluent client's commitOffsets resolves
// once librdkafka has queued it (commitCb = commitAsync), and librdkafka's consumer close then waits for every
// outstanding commit (rdkafka_cgrp.c rd_kafka_cgrp_try_terminate: wait_commit_cnt == 0) while its request to the
// coordinator stays queued. A private broker (never the shared one) frozen with SIGSTOP plays a coordinator that does
// not answer (a network partition, a stalled JVM). A member with nothing noted closes under the same fault; one with
// noted positions closes after `closeTimeoutMs` with EFF_CLOSE_TIMEOUT naming them; its naive twin (a bound longer
// than the test's: the old unbounded wait) is still closing at the test's bound. About 50 s: most of it is the private
// broker's start.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { silentLogger } from '../../src/observability/logger.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import type { Admin } from '../../src/transport/port.ts';
import { positionAfter } from '../../src/transport/position.ts';
import { eventually, randomName } from '../support/fixtures.ts';
import { freePorts, kafkaScript } from '../support/kafka-script.ts';

const records = 100;
const closeTimeoutMs = 3000;
const boundMs = 12_000;

/**
 * A member that applied every record of its own topic and group; `commitIntervalMs` decides what is left noted. Its
 * coded log lines (those with a `code` field) are kept.
 */
async function member(brokers: string[], admin: Admin, commitIntervalMs: number, closeTimeout = closeTimeoutMs) {
  const topic = randomName('close').replace('_', '-');
  await admin.createTopics([{ topic, partitions: 2 }]);
  const coded: Record<string, unknown>[] = [];
  const logger = {
    ...silentLogger,
    warn: (_: string, fields?: Record<string, unknown>) => void coded.push(fields ?? {}),
  };
  const transport = kafkaTransport({
    brokers,
    clientId: 'effectively-test',
    logger,
    commitIntervalMs,
    closeTimeoutMs: closeTimeout,
  });
  const producer = transport.producer();
  await producer.send(
    Array.from({ length: records }, (_, n) => ({ topic, key: `k${n}`, value: Buffer.from('x'), headers: {} })),
  );
  await producer.close();
  const group = randomName('g');
  const consumer = transport.consumer({ group, topics: [topic], maxBatchSize: 20, fromBeginning: true });
  let applied = 0;
  await consumer.run(async (batch, control) => {
    applied += batch.records.length;
    const last = batch.records.at(-1)!;
    consumer.commit([positionAfter(last)]).catch(() => undefined);
    control.resolve(last.offset);
  });
  await eventually(async () => applied >= records, 60_000, 'the member to read every record');
  const committed = async () =>
    (await admin.committedOffsets(group, topic)).reduce((sum, c) => sum + Math.max(0, Number(c.offset)), 0);
  return { consumer, committed, topic, coded: () => coded.filter((fields) => fields.code !== undefined) };
}

// A close that gave up (EFF_CLOSE_TIMEOUT) leaves the client's own close running in the background, on a worker thread
// of libuv's pool, until its last request is answered or fails. The private broker is stopped after the test: a
// client close still running then waits for ever, and holds even process.exit() (Node joins the pool's threads at
// exit: seen with gdb, the main thread in uv__threadpool_cleanup). Twice in clean-clone CI runs this file's process
// never ended. So the test waits, after the broker is thawed, until the clients' own closes are over: librdkafka's
// threads (named `rdk:`) end when a client is destroyed.
const clientThreads = (): number => {
  try {
    return readdirSync('/proc/self/task').filter((task) =>
      readFileSync(`/proc/self/task/${task}/comm`, 'utf8').startsWith('rdk:'),
    ).length;
  } catch {
    return 0; // no /proc (not Linux): nothing to wait for here
  }
};

test('close() with the coordinator not answering (frozen broker)', async (t) => {
  const port = await freePorts(2);
  const kafka = kafkaScript(t, { KAFKA_PORT: String(port), KAFKA_CONTROLLER_PORT: String(port + 1) });
  if (!kafka) return;
  kafka.run(['start']);
  const brokers = [`127.0.0.1:${port}`];
  const admin = kafkaTransport({ brokers, logger: silentLogger }).admin();

  const twin = await member(brokers, admin, 0, 10 * boundMs); // nothing noted: its close needs no bound
  await eventually(async () => (await twin.committed()) === records, 30_000, "the twin's commits");
  const noted = await member(brokers, admin, 60_000); // positions after the first commit stay noted, unsent
  assert.ok((await noted.committed()) < records, 'positions are noted and not sent before close');
  const unbounded = await member(brokers, admin, 60_000, 10 * boundMs);
  await admin.close();

  const pid = Number(readFileSync(join(kafka.home, 'broker.pid'), 'utf8').trim());
  process.kill(pid, 'SIGSTOP');
  const started = Date.now();
  const timed = (close: Promise<void>) => close.then(() => Date.now() - started);
  const twinClose = timed(twin.consumer.close());
  const notedClose = timed(noted.consumer.close());
  const unboundedClose = timed(unbounded.consumer.close());
  const within = (took: Promise<number>) =>
    Promise.race([
      took,
      new Promise<number>((resolve) => setTimeout(() => resolve(Number.POSITIVE_INFINITY), boundMs)),
    ]);
  try {
    await t.test('twin: a member with nothing noted closes within the bound', async () => {
      const took = await within(twinClose);
      assert.ok(took < boundMs, `closed after ${took} ms`);
    });
    await t.test(
      'a member with noted positions closes after closeTimeoutMs, naming them (EFF_CLOSE_TIMEOUT)',
      async () => {
        const took = await within(notedClose);
        assert.ok(took >= closeTimeoutMs && took < boundMs, `closed after ${took} ms`);
        const [line, ...more] = noted.coded();
        assert.equal(line?.code, 'EFF_CLOSE_TIMEOUT', JSON.stringify(noted.coded()));
        assert.deepEqual(more, []);
        const uncommitted = line.uncommitted as string[];
        assert.ok(uncommitted.length > 0, 'the final commit was never confirmed');
        for (const position of uncommitted) assert.match(position, new RegExp(`^${noted.topic}\\[[01]\\]@\\d+$`));
      },
    );
    await t.test('naive twin: with the bound past the test (the old wait), close() is still waiting', async () => {
      assert.equal(await within(unboundedClose), Number.POSITIVE_INFINITY);
      assert.deepEqual(unbounded.coded(), []);
    });
  } finally {
    process.kill(pid, 'SIGCONT');
    // Resumed, the broker answers the commit and the client's close finishes: no client is left behind by this test.
    await Promise.all([twinClose, notedClose, unboundedClose]);
    await eventually(async () => clientThreads() === 0, 60_000, "the clients' own closes, before the broker stops");
  }
});
