// Issue 28 item 1: a redrive goes where the consumers read. On an embedded Db (PGlite) `operatorCommand`'s redrive
// used to default to Kafka: with a broker on the machine it published there, marked the letter redriven and exited 0,
// and the embedded consumer never saw it. Now an embedded Db redrives into its own log, a server Db without
// --transport is refused, a letter redriven before can be redriven again, and every redrive says where it went.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { operatorCommand } from '../../src/cli/operator.ts';
import { collectedOutput } from '../../src/cli/output.ts';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import type { Db } from '../../src/db/port.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { PermanentError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, freshSchema, freshTopic, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

function runner(db: Db) {
  return async (...argv: string[]) => {
    const output = collectedOutput();
    const code = await operatorCommand(db, argv, output);
    return { code, lines: output.lines, errors: output.errors, all: [...output.lines, ...output.errors].join('\n') };
  };
}

/** An embedded service whose consumer dead-lettered event 2 of 1, 2, 3 (the fault now fixed). */
async function embeddedWithLetter(t: TestContext, topic: string) {
  const db = await pgliteDb();
  t.after(() => db.close());
  await migrate(db, { schema: 'effectively' });
  await db.query('CREATE TABLE public.applied (n int PRIMARY KEY)');
  const transport = postgresTransport({ db, pollIntervalMs: 10 });
  const admin = transport.admin();
  await admin.createTopics([{ topic, partitions: 1 }]);
  let broken = true;
  const consumer = createConsumer({
    db,
    transport,
    group: 'g',
    topics: [topic],
    logger: silentLogger,
    handler: async (event, { tx }) => {
      const n = (event.data as { n: number }).n;
      if (broken && n === 2) throw new PermanentError('the template is missing');
      await tx.query('INSERT INTO public.applied (n) VALUES ($1)', [n]);
    },
  });
  t.after(() => consumer.close());
  await consumer.start();
  await transport
    .producer()
    .send(
      [1, 2, 3].map((n) => encodeEvent(createEvent({ topic, type: 'x', source: '/t', key: `k${n}`, data: { n } }))),
    );
  const applied = async () =>
    (await db.query<{ n: number }>('SELECT n FROM public.applied ORDER BY n')).rows.map((row) => row.n);
  await eventually(async () => (await applied()).length === 2, 20_000, 'the two healthy events applied');
  const [letter] = await deadLetterStore().list(db);
  assert.ok(letter, 'event 2 dead-lettered');
  broken = false; // the operator fixed the template
  /** The embedded log's end offset: what was appended to the topic. */
  const logEnd = async () => Number((await admin.endOffsets(topic))[0]?.offset ?? 0);
  return { db, run: runner(db), applied, logEnd, id: letter.id };
}

test('redrive on an embedded Db: into its own log, not a broker, and it says so', async (t) => {
  const topic = randomName('orders').replace('_', '-');
  const { run, applied, logEnd, id } = await embeddedWithLetter(t, topic);
  const before = await logEnd();
  const redriven = await run('dlq', 'redrive', '--ids', id);
  assert.equal(redriven.code, 0, redriven.all);
  assert.match(
    redriven.all,
    new RegExp(`sent with the postgres transport to the embedded log in schema effectively: ${topic} \\(1\\)`),
  );
  assert.equal(await logEnd(), before + 1, 'the embedded log has the redriven record');
  await eventually(async () => (await applied()).includes(2), 20_000, 'the redriven event applied');
});

test('naive twin: the old default (Kafka) marks the letter redriven and the embedded log never gets it; a second redrive recovers it', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const { topic } = await freshTopic(t, 1); // the same name on the broker, so the old behaviour's send succeeds
  const { db, run, applied, logEnd, id } = await embeddedWithLetter(t, topic);
  const before = await logEnd();
  const toKafka = await run('dlq', 'redrive', '--ids', id, '--transport', 'kafka');
  assert.equal(toKafka.code, 0, toKafka.all);
  assert.match(toKafka.all, /sent with the kafka transport to Kafka at /);
  // the guarantee test's check, failing here: the letter is marked redriven, the consumers' log has nothing new
  assert.equal(await logEnd(), before, 'the embedded log got nothing');
  assert.equal((await deadLetterStore().list(db, { status: 'redriven' })).length, 1, 'marked redriven');

  const again = await run('dlq', 'redrive', '--ids', id);
  assert.equal(again.code, 0);
  assert.match(
    again.all,
    /no dead letter matches, the filter matches 1 redriven; --status redriven redrives those again/,
  );
  const recovered = await run('dlq', 'redrive', '--ids', id, '--status', 'redriven');
  assert.equal(recovered.code, 0, recovered.all);
  assert.match(recovered.all, /dlq: redriven 1/);
  await eventually(async () => (await applied()).includes(2), 20_000, 'the letter redriven again is applied');
});

test('redrive on a PostgreSQL server Db without --transport: refused with a code, nothing sent or marked', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const store = deadLetterStore({ schema });
  await store.keep(db, {
    consumer: 'billing',
    record: {
      topic: 'orders',
      partition: 0,
      offset: '1',
      key: null,
      value: Buffer.from('{}'),
      headers: {},
      timestamp: 0,
    },
    eventId: null,
    error: new PermanentError('no'),
    attempts: 1,
    firstFailedAt: new Date(),
  });
  const run = runner(db);
  const refused = await run('dlq', 'redrive', '--all', '--schema', schema);
  assert.equal(refused.code, 1);
  assert.match(
    refused.errors.join('\n'),
    /^effectively: EFF_REDRIVE_TRANSPORT_UNKNOWN: .*--transport kafka or --transport postgres/,
  );
  const discarded = await run(
    'dlq',
    'redrive',
    '--all',
    '--schema',
    schema,
    '--transport',
    'postgres',
    '--status',
    'discarded',
  );
  assert.equal(discarded.code, 1);
  assert.match(discarded.all, /EFF_INVALID_OPTIONS/);
  assert.equal((await store.list(db)).length, 1, 'still dead');
});
