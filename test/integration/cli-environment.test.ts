// Issue 28 items 3 and 4: the CLI says which database (host:port/name, never the password) and schema it acts on;
// a command that changes the database refuses the built-in default when DATABASE_URL is unset; an unreachable
// database, a database that does not exist and an unreachable broker are each one coded line, not a stack.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { defaultDatabaseUrl, pgDb } from '../../src/db/pg.ts';
import { EffectivelyError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { cliEnv, runCliIn } from '../support/cli.ts';
import { freshSchema, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

/** The environment without DATABASE_URL: the built-in default, as a first run on a laptop has it. */
function unset(): NodeJS.ProcessEnv {
  const { DATABASE_URL: _url, ...env } = process.env;
  return env;
}

async function schemaExists(schema: string): Promise<boolean> {
  const db = pgDb({ max: 1 });
  try {
    const { rows } = await db.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema]);
    return rows.length === 1;
  } finally {
    await db.close();
  }
}

/** No stack, no driver dump: the database line, then one coded line. */
function oneCodedLine(stderr: string, code: string): string {
  const lines = stderr.trim().split('\n');
  assert.equal(lines.length, 2, stderr);
  assert.match(lines[0]!, /^effectively: database /);
  assert.match(lines[1]!, new RegExp(`^effectively: ${code}: `));
  return lines[1]!;
}

test('the CLI names the database and schema; a reading command runs on the default and says it is the default', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  if (new URL(defaultDatabaseUrl()).pathname !== '/postgres') return t.skip('DATABASE_URL is not the default here');
  const { schema } = await freshSchema(t);
  const listed = await runCliIn(unset(), 'dlq', 'list', '--schema', schema);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(
    listed.stderr,
    new RegExp(
      `^effectively: database 127\\.0\\.0\\.1:5432/postgres \\(DATABASE_URL is unset: the default\\), schema ${schema}$`,
      'm',
    ),
  );
  const url = new URL(defaultDatabaseUrl());
  url.password = 'not-to-be-printed';
  const said = await runCliIn(cliEnv({ DATABASE_URL: url.href }), 'dlq', 'list', '--schema', schema);
  assert.match(
    said.stderr,
    new RegExp(`^effectively: database ${url.hostname}:${url.port || 5432}${url.pathname}, schema ${schema}$`, 'm'),
  );
  assert.doesNotMatch(said.stderr + said.stdout, /not-to-be-printed/);
});

test('a command that changes the database refuses the implicit default; the twin with DATABASE_URL said runs it', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const schema = randomName('t');
  t.after(async () => {
    const db = pgDb({ max: 1 });
    await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await db.close();
  });
  const refused = await runCliIn(unset(), 'migrate', '--schema', schema);
  assert.equal(refused.code, 1);
  assert.match(
    oneCodedLine(refused.stderr, 'EFF_DATABASE_UNSET'),
    /`migrate` changes the database .* set it, e\.g\. DATABASE_URL=/,
  );
  assert.equal(await schemaExists(schema), false, 'nothing migrated');
  // the same command, the same database, said: the check above can see a migration happen
  const said = await runCliIn(cliEnv(), 'migrate', '--schema', schema);
  assert.equal(said.code, 0, said.stderr);
  assert.equal(await schemaExists(schema), true);
  // a dry run changes nothing: it runs on the default
  assert.equal((await runCliIn(unset(), 'dlq', 'redrive', '--all', '--dry-run', '--schema', schema)).code, 0);
  const discard = await runCliIn(unset(), 'dlq', 'discard', '--ids', '1', '--schema', schema);
  assert.equal(discard.code, 1);
  oneCodedLine(discard.stderr, 'EFF_DATABASE_UNSET');
});

test('a database that does not exist, and one nobody answers for: one coded line saying what to do', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const missing = new URL(defaultDatabaseUrl());
  missing.pathname = `/${randomName('nodb')}`;
  const absent = await runCliIn(cliEnv({ DATABASE_URL: missing.href }), 'dlq', 'list');
  assert.equal(absent.code, 1);
  assert.match(oneCodedLine(absent.stderr, 'EFF_DB_UNREACHABLE'), /does not exist.*create it \(`createdb nodb_\w+`\)/);
  const nobody = await runCliIn(cliEnv({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/shop' }), 'dlq', 'list');
  assert.equal(nobody.code, 1);
  assert.match(
    oneCodedLine(nobody.stderr, 'EFF_DB_UNREACHABLE'),
    /127\.0\.0\.1:1\/shop \(connect ECONNREFUSED.*start PostgreSQL there/,
  );
});

test('an unreachable broker: topics create is one coded line naming the brokers tried', async () => {
  const result = await runCliIn(cliEnv({ KAFKA_BROKERS: '127.0.0.1:1' }), 'topics', 'create', 'orders');
  assert.equal(result.code, 1);
  const lines = result.stderr
    .trim()
    .split('\n')
    .filter((line) => !line.startsWith('{')); // the client's own log lines (JSON, rate-limited) may come first
  assert.equal(lines.length, 1, result.stderr);
  assert.match(
    lines[0]!,
    /^effectively: EFF_BROKER_UNREACHABLE: no Kafka broker answered at 127\.0\.0\.1:1 .*KAFKA_BROKERS/,
  );
});

// 30 s (the Kafka client's connect timeout): too long for CI, run by hand with EFFECTIVELY_LONG=1.
test('consumer.start() with no broker rejects with EFF_BROKER_UNREACHABLE, not a raw KafkaJSError', async (t) => {
  if (process.env.EFFECTIVELY_LONG !== '1') return t.skip('30 s: run by hand with EFFECTIVELY_LONG=1');
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const consumer = createConsumer({
    db,
    schema,
    transport: kafkaTransport({ brokers: ['127.0.0.1:1'], logger: silentLogger }),
    group: 'g',
    topics: ['orders'],
    logger: silentLogger,
    handler: async () => undefined,
  });
  t.after(() => consumer.close());
  await assert.rejects(consumer.start(), (error: unknown) => {
    assert.ok(error instanceof EffectivelyError, String(error));
    assert.equal(error.code, 'EFF_BROKER_UNREACHABLE');
    assert.match(
      error.message,
      /no Kafka broker answered at 127\.0\.0\.1:1 .* to connect a consumer: start the broker/,
    );
    return true;
  });
});
