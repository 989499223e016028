// Operating an embedded deployment: PGlite lives in the application's process and no second process may open it, so
// the CLI's operator commands run in-process on the application's own Db (operatorCommand). And `effectively outbox`
// for the rows the transport refused. PGlite for the first, real PostgreSQL and the real broker for the second.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { operatorCommand } from '../../src/cli/operator.ts';
import { collectedOutput } from '../../src/cli/output.ts';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { defaultDatabaseUrl } from '../../src/db/pg.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { PermanentError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { cli } from '../support/cli.ts';
import { eventually, freshSchema, outboxCount } from '../support/fixtures.ts';
import { paddedEvents, refusingRelay } from '../support/refusing-relay.ts';
import { needs } from '../support/services.ts';
import { smallTopic } from '../support/small-topic.ts';

test('operatorCommand: migrate, list and redrive dead letters of an embedded deployment in its own process', async (t) => {
  const db = await pgliteDb();
  t.after(() => db.close());
  const run = async (...argv: string[]) => {
    const output = collectedOutput();
    const code = await operatorCommand(db, argv, output);
    return { code, lines: output.lines, errors: output.errors };
  };
  const notYet = await run('dlq', 'list');
  assert.equal(notYet.code, 1);
  assert.match(notYet.errors[0] ?? '', /EFF_NOT_MIGRATED.*migrate --schema effectively/);
  assert.equal((await run('migrate')).code, 0);

  const transport = postgresTransport({ db });
  await db.query('CREATE TABLE public.applied (n int PRIMARY KEY)');
  let broken = true;
  const consumer = createConsumer({
    db,
    transport,
    group: 'g',
    topics: ['orders'],
    logger: silentLogger,
    handler: async (event, { tx }) => {
      const n = (event.data as { n: number }).n;
      if (broken && n === 2) throw new PermanentError('the template is missing');
      await tx.query('INSERT INTO public.applied (n) VALUES ($1)', [n]);
    },
  });
  t.after(() => consumer.close());
  await consumer.start();
  const outbox = createOutbox();
  await db.transaction((tx) =>
    outbox.enqueue(
      tx,
      [1, 2, 3].map((n) => createEvent({ topic: 'orders', type: 'x', source: '/t', key: `k${n}`, data: { n } })),
    ),
  );
  const relay = createRelay({ db, producerFactory: () => transport.producer(), logger: silentLogger });
  t.after(() => relay.close());
  await relay.start();
  const applied = async () => (await db.query<{ n: number }>('SELECT n FROM public.applied ORDER BY n')).rows;
  await eventually(async () => (await applied()).length === 2, 20_000, 'the two healthy events applied');

  const listed = await run('dlq', 'list', '--json');
  assert.equal(listed.code, 0);
  const letters = JSON.parse(listed.lines[0] ?? '[]') as { id: string; code: string }[];
  assert.deepEqual(
    letters.map((l) => l.code),
    ['EFF_HANDLER_FAILED'],
  );
  assert.equal((await run('dlq', 'redrive', '--transport', 'postgres')).code, 2, 'no filter: asks for --all');
  broken = false; // the operator fixed the template
  const redriven = await run('dlq', 'redrive', '--transport', 'postgres', '--ids', letters[0]!.id);
  assert.equal(redriven.code, 0, redriven.errors.join('\n'));
  assert.match(redriven.lines.at(-1) ?? '', /dlq: redriven 1/);
  await eventually(async () => (await applied()).length === 3, 20_000, 'the redriven event applied');
  assert.deepEqual(
    (await applied()).map((row) => row.n),
    [1, 2, 3],
  );
  const effects = await run('effects', 'list');
  assert.deepEqual([effects.code, effects.lines], [0, ['effects: listed 0']]);
  const unknown = await run('relay');
  assert.equal(unknown.code, 2, 'long-running services are not operator commands');
});

test('effectively outbox: refused rows listed with what they hold, discarded only by seq', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const topic = await smallTopic(t, { maxMessageBytes: 100_000 });
  const event = paddedEvents(topic);
  await db.transaction((tx) =>
    createOutbox({ schema }).enqueue(tx, [event('K', 1, 300_000), event('K', 2), event('other', 3)]),
  );
  const transport = kafkaTransport({ clientId: 'effectively-test' });
  // The topic's limit, told: under load the client may put K 1 and K 2 in separate batches, and K 2 was written.
  await refusingRelay(t, { db, schema, producerFactory: () => transport.producer(), maxMessageBytes: 100_000 });
  const outboxRows = () => outboxCount(db, schema);
  const env = { ...process.env, DATABASE_URL: defaultDatabaseUrl() };
  const run = (...args: string[]) =>
    promisify(execFile)(process.execPath, [cli, 'outbox', ...args, '--schema', schema], { env }).then(
      ({ stdout }) => ({ code: 0, out: stdout }),
      (error: { code: number; stdout: string; stderr: string }) => ({
        code: error.code,
        out: error.stdout + error.stderr,
      }),
    );
  let listed = { code: -1, out: '' };
  await eventually(
    async () => {
      listed = await run('refused');
      return /outbox: refused 1/.test(listed.out);
    },
    30_000,
    'the big row set aside',
  );
  const [seq] = listed.out.split('\t');
  assert.match(listed.out, /\tK\tERR_MSG_SIZE_TOO_LARGE\t\d+ B\t1 held\t/);
  assert.equal(await outboxRows(), 1, "K's second row waits behind it; the other key flowed");
  assert.equal((await run('discard')).code, 2, 'discard needs --seqs');
  assert.equal((await run('discard', '--seqs', 'x1')).code, 2, 'seqs are numbers');
  const discarded = await run('discard', '--seqs', seq!);
  assert.match(discarded.out, /outbox: discarded 1/);
  await eventually(
    async () => (await outboxRows()) === 0,
    30_000,
    "K's held row published once the refused one is gone",
  );
  assert.match((await run('refused')).out, /outbox: refused 0/);
});
