// An honest ending for the chaos kit: a run stopped before every event was delivered says "incomplete" (exit 2) and
// where the undelivered events are; "lost" is kept for events that are provably gone, and the auditor can see one.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { auditStory } from '../../scenarios/boxoffice/audit.ts';
import { scheduleEmail } from '../../scenarios/boxoffice/orders.ts';
import { ending } from '../../scenarios/chaos/ending.ts';
import { runChaos } from '../../scenarios/chaos/run.ts';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { pgDb } from '../../src/db/pg.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { eventually } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const main = fileURLToPath(new URL('../../scenarios/chaos/main.ts', import.meta.url));

function runCli(args: string[]): Promise<{ code: number | null; lines: string[] }> {
  const child = spawn(process.execPath, ['--import', 'tsx', main, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr.resume();
  return new Promise((resolve) =>
    child.on('exit', (code) => resolve({ code, lines: out.split('\n').filter(Boolean) })),
  );
}

test('a run stopped by a short --timeout ends with the incomplete line and exit 2, not with "lost"', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  // 3000 orders at 300 per second cannot all be written within 4 s: the run must stop before the end.
  const { code, lines } = await runCli(['--events', '3000', '--kills', '0', '--rate', '300', '--timeout', '4']);
  const last = lines.at(-1) ?? '';
  assert.match(
    last,
    /^chaos: events=3000 kills=0 incomplete delivered=\d+ pending=\d+ duplicated=0$/,
    lines.join('\n'),
  );
  const [, delivered, pending] = /delivered=(\d+) pending=(\d+)/.exec(last)!.map(Number);
  assert.equal(delivered! + pending!, 3000);
  assert.ok(pending! > 0);
  assert.match(lines.join('\n'), /pending_outbox=\d+ pending_topic=\d+ unwritten=\d+ lost=0/);
  assert.equal(code, 2);
});

test('the pending events of a stopped run are where the auditor says: the topic past the offset, the outbox', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  // The consumer is frozen after 200 e-mails and the relay after 600 orders: the rest waits on the topic and in the
  // outbox when the deadline stops the run.
  const result = await runChaos({
    events: 1000,
    kills: 0,
    rate: 250,
    timeoutMs: 9000,
    freeze: { consumer: { afterDelivered: 200 }, relay: { afterOrders: 600 } },
    keep: true,
  });
  const { schema, topic, group } = result.config;
  const db = pgDb({ max: 4 });
  const transport = kafkaTransport({ clientId: 'chaos-ending-test' });
  const admin = transport.admin();
  // Cleanups in reverse order (t.after runs its hooks in the order given): the relay and the consumer stop before
  // their schema is dropped.
  const cleanups: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  cleanups.push(async () => {
    await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await admin.deleteTopics([topic]).catch(() => undefined);
    await admin.close();
    await db.close();
  });
  assert.ok(result.stoppedEarly);
  assert.equal(result.lost, 0, 'nothing is provably gone');
  assert.ok(result.pendingTopic > 0 && result.pendingOutbox > 0, JSON.stringify(result));
  assert.equal(result.delivered + result.pending, result.events);
  // The old audit (orders without an e-mail) would have called every pending one "lost".
  assert.ok(result.orders - result.delivered > 0);
  assert.equal(ending(result).exitCode, 2);

  const delivered = async () => {
    const audit = await auditStory(db, schema);
    return audit.orders - audit.lost;
  };
  const caughtUp = async () => {
    const [committed, ends] = await Promise.all([admin.committedOffsets(group, topic), admin.endOffsets(topic)]);
    const at = new Map(committed.map((position) => [position.partition, BigInt(position.offset)]));
    return ends.every((end) => BigInt(end.offset) === 0n || at.get(end.partition) === BigInt(end.offset));
  };
  // The group resumed (same static member) applies exactly the events said to wait on the topic.
  const consumer = createConsumer({
    db,
    transport,
    group,
    topics: [topic],
    schema,
    maxBatchSize: 200,
    instanceId: 'chaos-consumer',
    sessionTimeoutMs: 6000,
    handler: async (event, { tx }) => {
      await scheduleEmail(tx, schema, event);
    },
  });
  cleanups.push(() => consumer.close());
  await consumer.start();
  await eventually(caughtUp, 45_000, 'the group to reach the end of the topic');
  assert.equal(await delivered(), result.delivered + result.pendingTopic);
  // The relay then publishes exactly the events said to wait in the outbox.
  const relay = createRelay({ db, producer: transport.producer(), schema, batchSize: 200 });
  cleanups.push(() => relay.close());
  await relay.start();
  const expected = result.delivered + result.pendingTopic + result.pendingOutbox;
  await eventually(async () => (await delivered()) === expected && (await caughtUp()), 45_000, 'the outbox events');
  const audit = await auditStory(db, schema);
  assert.equal(audit.duplicated, 0);
  assert.equal(audit.orders - audit.lost, result.orders);
});

test('an event deleted by hand from the outbox after its commit is reported as lost (the auditor sees a real loss)', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  // The relay and the consumer start only once every order is written and one outbox row was deleted behind them.
  const result = await runChaos({
    events: 300,
    kills: 0,
    rate: 1000,
    idleMs: 5000,
    holdUntilWritten: ['relay', 'consumer'],
    afterWriter: async (db, config) => {
      await db.query(`DELETE FROM ${config.schema}.outbox WHERE seq = (SELECT min(seq) FROM ${config.schema}.outbox)`);
    },
  });
  assert.equal(result.lost, 1, JSON.stringify(result));
  assert.equal(result.duplicated, 0);
  const end = ending(result);
  assert.equal(end.exitCode, 1);
  assert.match(end.lines.at(-1) ?? '', /^chaos: events=300 kills=0 lost=1 duplicated=0$/);
});

test('an event already claimed by the group but with no e-mail is lost, not pending (a copy would be skipped)', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  // The relay is frozen at once: every event stays in the outbox; one of them is marked applied behind the kit's back.
  const result = await runChaos({
    events: 300,
    kills: 0,
    rate: 1000,
    idleMs: 4000,
    freeze: { relay: { afterOrders: 0 } },
    afterWriter: async (db, config) => {
      await db.query(
        `INSERT INTO ${config.schema}.processed_events (consumer, event_id)
         SELECT $1, id FROM ${config.schema}.outbox ORDER BY seq LIMIT 1`,
        [config.group],
      );
    },
  });
  assert.deepEqual(
    [result.lost, result.pendingOutbox, result.delivered, result.duplicated],
    [1, 299, 0, 0],
    JSON.stringify(result),
  );
  assert.equal(ending(result).exitCode, 1);
});

test('an event the library gave up on (the relay set it aside as refused) is lost with its reason named', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  // One outbox row moved to outbox_refused behind the relay's back, as a refusal by the broker would.
  const result = await runChaos({
    events: 300,
    kills: 0,
    rate: 1000,
    idleMs: 5000,
    holdUntilWritten: ['relay', 'consumer'],
    afterWriter: async (db, config) => {
      const s = config.schema;
      await db.query(
        `WITH moved AS (DELETE FROM ${s}.outbox WHERE seq = (SELECT min(seq) FROM ${s}.outbox) RETURNING *)
         INSERT INTO ${s}.outbox_refused (seq, id, topic, key, shard, headers, payload, created_at, error_code, reason)
         SELECT seq, id, topic, key, shard, headers, payload, created_at, 'ERR_MSG_SIZE_TOO_LARGE', 'set aside by the test'
           FROM moved`,
      );
    },
  });
  assert.equal(result.lost, 1, JSON.stringify(result));
  assert.equal(result.refused, 1);
  assert.equal(result.deadLettered, 0);
  const lines = ending(result).lines.join('\n');
  assert.match(lines, /^chaos: lost=1 dead_lettered=0 refused=1$/m);
  assert.match(lines, /^chaos: lost order=[0-9a-f-]{36} refused: set aside by the test$/m);
});
