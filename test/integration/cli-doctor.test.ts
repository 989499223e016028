// effectively doctor against the real PostgreSQL and the real broker: 0 on a healthy setup, 1 with one clear line on
// a broken one. Every check is shown passing and then failing on the same setup with one thing broken (its naive
// twin: a check that cannot fail would pass both).
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { operatorCommand } from '../../src/cli/operator.ts';
import { collectedOutput } from '../../src/cli/output.ts';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { pgDb } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { KafkaJS } from '../../src/transport/kafka/client.ts';
import { defaultBrokers } from '../../src/transport/kafka/config.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { runCli } from '../support/cli.ts';
import { eventually, freshSchema, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const day = 86_400_000;

async function doctor(db: Db, schema: string, ...argv: string[]) {
  const output = collectedOutput();
  const code = await operatorCommand(db, ['doctor', '--schema', schema, ...argv], output);
  return { code, lines: output.lines, text: output.lines.join('\n') };
}

/** Topics of their own with the given partitions and `retention.ms` (the library's admin sets no topic configs). */
async function topics(t: TestContext, specs: { topic: string; partitions: number; retentionMs: number }[]) {
  const kafka = new KafkaJS.Kafka({
    kafkaJS: { brokers: defaultBrokers(), clientId: 'effectively-test', logLevel: KafkaJS.logLevel.ERROR },
  });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: specs.map((spec) => ({
      topic: spec.topic,
      numPartitions: spec.partitions,
      replicationFactor: 1,
      configEntries: [{ name: 'retention.ms', value: String(spec.retentionMs) }],
    })),
  });
  t.after(async () => {
    await admin.deleteTopics({ topics: specs.map((spec) => spec.topic) }).catch(() => undefined);
    await admin.disconnect();
  });
}

async function declareGroup(db: Db, schema: string, group: string, keepMs: number | null) {
  await db.query(`INSERT INTO ${schema}.consumer_groups (name, dedup_keep_ms) VALUES ($1, $2)`, [group, keepMs]);
}

test('doctor: healthy is 0; a topic kept longer than the dedup rows, a short dead-letter topic or lag make it 1', async (t) => {
  if (!(await needs(t, 'postgres', 'kafka'))) return;
  const { db, schema } = await freshSchema(t);
  const group = randomName('g');
  const orders = randomName('orders').replace('_', '-');
  const audit = randomName('audit').replace('_', '-');
  await declareGroup(db, schema, group, 2 * day);
  await topics(t, [
    { topic: orders, partitions: 2, retentionMs: day },
    { topic: `${orders}-dlt`, partitions: 2, retentionMs: day },
    { topic: audit, partitions: 3, retentionMs: 30 * day },
    { topic: `${audit}-dlt`, partitions: 1, retentionMs: day },
  ]);
  const args = ['--consumer', group, '--max-lag', '0'];

  const healthy = await doctor(db, schema, ...args, '--topic', orders);
  assert.equal(healthy.code, 0, healthy.text);
  assert.ok(
    healthy.lines.every((line) => /^(ok|skip) /.test(line) || line === 'doctor: healthy'),
    healthy.text,
  );
  assert.match(
    healthy.text,
    new RegExp(`ok +retention +${orders}: retention.ms 1d against the dedup retention 2d of group ${group}`),
  );
  assert.match(healthy.text, new RegExp(`ok +dlt +${orders}-dlt: 2 partitions against 2 of ${orders}`));
  assert.match(healthy.text, new RegExp(`ok +lag +group ${group}: lag 0 records on 2 partitions`));

  // The same group reading a topic whose records outlive its dedup rows, whose dead-letter topic is short.
  const broken = await doctor(db, schema, ...args, '--topic', `${orders},${audit}`);
  assert.equal(broken.code, 1, broken.text);
  assert.match(
    broken.text,
    new RegExp(
      `warn +retention +${audit}: retention.ms 30d against the dedup retention 2d of group ${group}: a record redelivered or replayed after 2d finds its dedup row purged.* — raise the group's \`retention.keepMs\` to at least 30d`,
    ),
  );
  assert.match(broken.text, new RegExp(`warn +dlt +${audit}-dlt: 1 partitions against 3 of ${audit} — add partitions`));
  assert.match(broken.text, /doctor: not healthy \(0 fail, 2 warn\)/);

  // Lag: two records the group has not read.
  const producer = kafkaTransport({ clientId: 'effectively-test' }).producer();
  t.after(() => producer.close());
  await producer.send([
    { topic: orders, key: 'a', value: Buffer.from('1'), headers: {} },
    { topic: orders, key: 'b', value: Buffer.from('2'), headers: {} },
  ]);
  const lagging = await doctor(db, schema, ...args, '--topic', orders, '--json');
  assert.equal(lagging.code, 1, lagging.text);
  const report = JSON.parse(lagging.lines[0]!) as { healthy: boolean; findings: { level: string; check: string }[] };
  assert.equal(report.healthy, false);
  assert.deepEqual(
    report.findings.filter((f) => f.level !== 'ok').map((f) => f.check),
    ['lag'],
  );
});

test('doctor: a schema never migrated, or behind the library, is 1 with the command to run', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const missing = randomName('never');
  const never = await runCli('doctor', '--schema', missing, '--transport', 'postgres');
  assert.equal(never.code, 1, never.stdout);
  assert.match(
    never.stdout,
    new RegExp(
      `fail +migrations +schema ${missing} was never migrated — run \`npx effectively migrate --schema ${missing}\``,
    ),
  );
  const { db, schema } = await freshSchema(t);
  const current = await doctor(db, schema, '--transport', 'postgres');
  assert.equal(current.code, 0, current.text);
  assert.match(current.text, /ok +migrations +schema .* is at migration \d+, current/);
  await db.query(`DELETE FROM ${schema}.migrations WHERE version = (SELECT max(version) FROM ${schema}.migrations)`);
  const behind = await doctor(db, schema, '--transport', 'postgres');
  assert.equal(behind.code, 1, behind.text);
  assert.match(
    behind.text,
    /fail +migrations +schema .* is at migration \d+, this library at \d+ — run `npx effectively migrate/,
  );
});

test('doctor: a stuck outbox row, a refused row and an abandoned embedded lease are each 1', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const run = () => doctor(db, schema, '--transport', 'postgres', '--stuck-after', '5m');
  await db.transaction((tx) =>
    createOutbox({ schema }).enqueue(tx, [
      createEvent({ topic: 'orders', type: 'x', source: '/t', key: 'k', data: {} }),
    ]),
  );
  const badUsage = collectedOutput();
  assert.equal(await operatorCommand(db, ['doctor', '--schema', schema, '--stuck-after', '5 minutes'], badUsage), 2);
  assert.match(badUsage.errors.join('\n'), /usage: effectively\n {2}doctor /);
  const fresh = await run();
  assert.equal(fresh.code, 0, fresh.text);
  assert.match(fresh.text, /ok +outbox +1 rows pending/);
  assert.match(fresh.text, /ok +outbox-refused +no rows refused/);
  assert.match(fresh.text, /ok +leases +no embedded-log lease abandoned/);

  await db.query(`UPDATE ${schema}.outbox SET created_at = now() - interval '1 hour'`);
  const stuck = await run();
  assert.equal(stuck.code, 1, stuck.text);
  assert.match(stuck.text, /warn +outbox +1 rows pending, the oldest for 1h \(over 5m\) — start a relay/);
  await db.query(`UPDATE ${schema}.outbox SET created_at = now()`);

  await db.query(
    `INSERT INTO ${schema}.outbox_refused (seq, id, topic, key, shard, headers, created_at, error_code, reason)
     VALUES (1000000, gen_random_uuid(), 'orders', 'k', 0, '{}', now(), 'ERR_MSG_SIZE_TOO_LARGE', 'too large')`,
  );
  const refused = await run();
  assert.equal(refused.code, 1, refused.text);
  assert.match(
    refused.text,
    /fail +outbox-refused +1 rows refused for good .* seq 1000000, topic orders, ERR_MSG_SIZE_TOO_LARGE — fix the cause/,
  );
  await db.query(`DELETE FROM ${schema}.outbox_refused`);

  await postgresTransport({ db, schema })
    .admin()
    .createTopics([{ topic: 'orders', partitions: 1 }]);
  await db.query(
    `INSERT INTO ${schema}.log_leases (group_id, topic, partition, member_id, expires_at)
     VALUES ('billing', 'orders', 0, 'm1', now() - interval '1 hour')`,
  );
  const abandoned = await run();
  assert.equal(abandoned.code, 1, abandoned.text);
  assert.match(
    abandoned.text,
    /warn +leases +1 embedded-log leases abandoned \(groups billing\); the oldest: orders\[0\] of billing, expired 1h ago/,
  );
});

test('doctor --transport postgres: the lag of a group on the embedded log, its topics found from its offsets', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  await declareGroup(db, schema, 'billing', null);
  const producer = postgresTransport({ db, schema }).producer();
  t.after(() => producer.close());
  await producer.send([
    { topic: 'orders', key: 'a', value: Buffer.from('1'), headers: {} },
    { topic: 'orders', key: 'b', value: Buffer.from('2'), headers: {} },
  ]);
  await db.query(
    `INSERT INTO ${schema}.log_offsets (group_id, topic, partition, next_offset)
     SELECT 'billing', topic, partition, 0 FROM ${schema}.log_partitions WHERE topic = 'orders'`,
  );
  const within = await doctor(db, schema, '--transport', 'postgres', '--max-lag', '2');
  assert.equal(within.code, 0, within.text);
  assert.match(within.text, /ok +lag +group billing: lag 2 records on \d+ partitions of orders/);
  const over = await doctor(db, schema, '--transport', 'postgres', '--max-lag', '1');
  assert.equal(over.code, 1, over.text);
  const ghost = await doctor(db, schema, '--transport', 'postgres', '--consumer', 'billing,ghost', '--max-lag', '2');
  assert.equal(ghost.code, 1, ghost.text);
  assert.match(ghost.text, /warn +groups +no consumer group ghost declared in schema .* — check the name/);
  assert.match(ghost.text, /ok +lag +group billing/);
  assert.match(
    over.text,
    /warn +lag +group billing: lag 2 records on \d+ partitions of orders, the most on orders\[\d+\] \(\d\) \(over 1\) — check that the group runs/,
  );
});

test('doctor without --topic: a running consumer declares its group, the doctor finds its topics from its offsets', async (t) => {
  if (!(await needs(t, 'postgres', 'kafka'))) return;
  const { db, schema } = await freshSchema(t);
  const group = randomName('g');
  const topic = randomName('kept').replace('_', '-');
  await topics(t, [{ topic, partitions: 1, retentionMs: 30 * day }]);
  const transport = kafkaTransport({ clientId: 'effectively-test' });
  const consumer = createConsumer({
    db,
    schema,
    transport,
    group,
    topics: [topic],
    logger: silentLogger,
    retention: { keepMs: day },
    handler: async () => undefined,
  });
  t.after(() => consumer.close());
  await consumer.start();
  const producer = transport.producer();
  t.after(() => producer.close());
  // No event id: kept as a dead letter, and its offset committed all the same.
  await producer.send([{ topic, key: 'a', value: Buffer.from('{}'), headers: {} }]);
  let report = await doctor(db, schema, '--consumer', group);
  await eventually(
    async () => {
      report = await doctor(db, schema, '--consumer', group);
      return new RegExp(`lag +group ${group}: lag 0 records on 1 partitions of ${topic}`).test(report.text);
    },
    20_000,
    'the group to commit',
  );
  assert.equal(report.code, 1, report.text);
  assert.match(
    report.text,
    new RegExp(`warn +retention +${topic}: retention.ms 30d against the dedup retention 1d of group ${group}`),
  );
});

test('doctor: a database or brokers that do not answer are a fail line each, exit 1', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const nowhere = pgDb({ connectionString: 'postgres://postgres@127.0.0.1:1/postgres', max: 1 });
  t.after(() => nowhere.close());
  const noDatabase = await doctor(nowhere, 'effectively');
  assert.equal(noDatabase.code, 1, noDatabase.text);
  assert.match(noDatabase.lines[0] ?? '', /^fail +postgres +not reachable: .*ECONNREFUSED.* — check DATABASE_URL/);
  assert.equal(noDatabase.lines.length, 2, 'nothing else is checked without a database');

  const { db, schema } = await freshSchema(t);
  const brokers = process.env.KAFKA_BROKERS;
  process.env.KAFKA_BROKERS = '127.0.0.1:1';
  const noKafka = await doctor(db, schema).finally(() => {
    if (brokers === undefined) delete process.env.KAFKA_BROKERS;
    else process.env.KAFKA_BROKERS = brokers;
  });
  assert.equal(noKafka.code, 1, noKafka.text);
  assert.match(noKafka.text, /ok +migrations/);
  assert.match(noKafka.text, /fail +kafka +could not check: .* — check KAFKA_BROKERS \(127\.0\.0\.1:1\)/);
});
