// Issue 33, item 2: the library over TLS with passwords and tokens, against servers the test starts with certificates
// it makes: a Kafka broker whose only client listener is SASL_SSL (SCRAM-SHA-256, OAUTHBEARER) and a PostgreSQL with
// ssl=on that takes only TLS plus a SCRAM password. One broker and one cluster for the file (starting them is most of
// its time). Then a failing run (wrong passwords, a poison record, a failing provider) and a search for every secret's
// text in every log line, error, dead letter, effect and server log: found nowhere.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { inspect } from 'node:util';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgDb } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { httpProvider } from '../../src/effects/http-provider.ts';
import { createEffects } from '../../src/effects/ledger.ts';
import { createSender } from '../../src/effects/sender.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { PermanentError } from '../../src/errors.ts';
import type { Logger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import type { KafkaTransportOptions } from '../../src/transport/kafka/config.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { cliEnv, runCliIn } from '../support/cli.ts';
import { eventually, randomName } from '../support/fixtures.ts';
import {
  type Certificates,
  makeCertificates,
  type SecureBroker,
  type SecurePostgres,
  startSecureBroker,
  startSecurePostgres,
} from '../support/secure-services.ts';

const user = 'orm_app';
const orders = 10;
const secrets = {
  kafkaPassword: `kafka-pw-${randomName('s')}`,
  pgPassword: `pg-pw-${randomName('s')}`,
  providerToken: `provider-token-${randomName('s')}`,
  oauthToken: '', // made below: an unsecured JWT the broker's test validator accepts
};
const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const now = Math.floor(Date.now() / 1000);
secrets.oauthToken = `${base64url({ alg: 'none' })}.${base64url({ sub: user, iat: now, exp: now + 3600 })}.`;

const topicName = () => randomName('t').replace('_', '-');

/** Every line any component logged, every error met: what the search reads besides tables and server logs. */
const lines: string[] = [];
const errors: unknown[] = [];
const capture: Logger = {
  debug: (message, fields) => lines.push(JSON.stringify({ message, ...fields })),
  info: (message, fields) => lines.push(JSON.stringify({ message, ...fields })),
  warn: (message, fields) => lines.push(JSON.stringify({ message, ...fields })),
  error: (message, fields) => lines.push(JSON.stringify({ message, ...fields })),
};
const kept = <T>(promise: Promise<T>) =>
  promise.catch((error: unknown) => {
    errors.push(error);
    throw error;
  });

describe('secure connections: Kafka SASL_SSL (SCRAM, OAuth bearer), PostgreSQL TLS + SCRAM', () => {
  let dir: string;
  let certs: Certificates;
  let broker: SecureBroker;
  let postgres: SecurePostgres;
  let db: Db;
  const schema = randomName('sec');
  const url = (password: string) => `postgres://${user}:${password}@127.0.0.1:${postgres.port}/${user}`;
  const kafka = (extra: Partial<KafkaTransportOptions>): KafkaTransportOptions => ({
    brokers: broker.brokers,
    ssl: { ca: certs.ca },
    logger: capture,
    clientLogLevel: 'info',
    clientLogIntervalMs: 0,
    ...extra,
  });
  const scram = { mechanism: 'scram-sha-256', username: user, password: secrets.kafkaPassword } as const;
  const oauth = {
    mechanism: 'oauthbearer',
    token: async () => ({ value: secrets.oauthToken, principal: user, lifetime: (now + 3600) * 1000 }),
  } as const;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'effectively-secure-'));
    certs = makeCertificates(dir);
    [broker, postgres] = await Promise.all([
      startSecureBroker(dir, certs, { name: user, password: secrets.kafkaPassword }),
      startSecurePostgres(certs, { name: user, password: secrets.pgPassword }),
    ]);
    db = pgDb({ connectionString: url(secrets.pgPassword), ssl: { ca: certs.ca } });
    await migrate(db, { schema });
    await db.query('CREATE TABLE paid (order_id text NOT NULL)');
  });
  after(async () => {
    await db?.close();
    await Promise.all([broker?.stop(), postgres?.stop()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('outbox → relay (SCRAM) → consumer (OAuth bearer) over TLS, the database over TLS with a password', async () => {
    const topic = randomName('orders').replace('_', '-');
    const admin = kafkaTransport(kafka({ sasl: scram })).admin();
    await admin.createTopics([{ topic, partitions: 1 }]);
    await admin.close();
    const outbox = createOutbox({ schema });
    const effects = createEffects({ schema });
    const total = orders;
    await db.transaction(async (tx) => {
      for (let n = 0; n < total; n++) {
        const order = `order-${n}`;
        await outbox.enqueue(
          tx,
          createEvent({ topic, type: 'order.paid', source: '/sec', key: order, data: { order } }),
        );
        await effects.schedule(tx, { key: order, kind: 'receipt', payload: { order } });
      }
    });
    const relayTransport = kafkaTransport(kafka({ sasl: scram }));
    const relay = createRelay({ db, schema, producerFactory: () => relayTransport.producer(), logger: capture });
    const consumer = createConsumer({
      db,
      transport: kafkaTransport(kafka({ sasl: oauth })),
      group: randomName('paid'),
      topics: [topic],
      schema,
      logger: capture,
      sessionTimeoutMs: 6000,
      handler: async (event, { tx }) => {
        const { order } = event.data as { order: string };
        if (order === 'order-7') throw new PermanentError(`order ${order} cannot be paid`);
        await tx.query('INSERT INTO paid (order_id) VALUES ($1)', [order]);
      },
    });
    // a provider with a token in its URL, refusing every call (nothing listens on port 9): effects.last_error is written
    const sender = createSender({
      db,
      schema,
      logger: capture,
      provider: httpProvider({ url: `http://${user}:${secrets.providerToken}@127.0.0.1:9/receipts` }),
      pollIntervalMs: 50,
    });
    await relay.start();
    await consumer.start();
    sender.start();
    try {
      const store = deadLetterStore({ schema });
      await eventually(
        async () => {
          const paid = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM paid')).rows[0]!.n;
          const failed = (await db.query(`SELECT 1 FROM ${schema}.effects WHERE last_error IS NOT NULL`)).rows.length;
          return paid === total - 1 && (await store.list(db)).length === 1 && failed > 0;
        },
        40_000,
        'every order paid but the poison one, its dead letter, a failed effect call',
      );
    } finally {
      await Promise.all([relay.close(), consumer.close(), sender.close()]);
    }
  });

  // each waits for the client's 5-s admin timeout somewhere: side by side
  describe('who gets in', { concurrency: true }, () => {
    test('without TLS, or with a wrong password, neither server lets the library in; the errors say why', async () => {
      const refusal = (error: unknown) => (error as { code?: string; details?: { reason?: string } }) ?? {};
      const topic = () => randomName('x').replace('_', '-');
      const attempts = {
        // naive twins: the plain protocol is not spoken on the TLS listener, nor accepted by the database
        kafkaPlain: kafkaTransport({ brokers: broker.brokers, logger: capture, clientLogIntervalMs: 0 }).admin(),
        kafkaWrong: kafkaTransport(kafka({ sasl: { ...scram, password: `wrong-${secrets.kafkaPassword}` } })).admin(),
      };
      const pgPlain = pgDb({ connectionString: url(secrets.pgPassword), connectionTimeoutMs: 5000 });
      const pgWrong = pgDb({ connectionString: url(`wrong-${secrets.pgPassword}`), ssl: { ca: certs.ca } });
      const failure = (promise: Promise<unknown>) =>
        kept(promise).then(
          () => assert.fail('let in'),
          (error: unknown) => error,
        );
      const [kafkaPlain, kafkaWrong, plainPg, wrongPg] = await Promise.all([
        failure(attempts.kafkaPlain.createTopics([{ topic: topic(), partitions: 1 }])),
        failure(attempts.kafkaWrong.createTopics([{ topic: topic(), partitions: 1 }])),
        failure(pgPlain.query('SELECT 1')),
        failure(pgWrong.query('SELECT 1')),
      ]);
      await Promise.all([
        attempts.kafkaPlain.close().catch(() => undefined),
        attempts.kafkaWrong.close().catch(() => undefined),
        pgPlain.close(),
        pgWrong.close(),
      ]);
      assert.equal(refusal(kafkaPlain).code, 'EFF_BROKER_UNREACHABLE');
      assert.equal(refusal(kafkaWrong).code, 'EFF_TRANSPORT', 'a refused login is not "no broker answered"');
      assert.equal(refusal(kafkaWrong).details?.reason, 'refused');
      assert.match(String(kafkaWrong), /SASL authentication error/);
      assert.match(String(plainPg), /no pg_hba.conf entry|SSL off/);
      assert.match(String(wrongPg), /password authentication failed/);
      for (const error of errors) assert.ok(!inspect(error, { depth: 8 }).includes('wrong-'), inspect(error));
    });

    test('the CLI reaches the TLS + SCRAM broker with --config <file>, or with EFFECTIVELY_KAFKA_* variables', async () => {
      const config = join(dir, 'effectively.json');
      const kafkaSection = { brokers: broker.brokers, ssl: { caFile: certs.caFile }, sasl: scram };
      writeFileSync(config, JSON.stringify({ kafka: kafkaSection }));
      const environment = {
        KAFKA_BROKERS: broker.brokers.join(','),
        EFFECTIVELY_KAFKA_SSL_CA_FILE: certs.caFile,
        EFFECTIVELY_KAFKA_SASL_MECHANISM: 'scram-sha-256',
        EFFECTIVELY_KAFKA_SASL_USERNAME: user,
        EFFECTIVELY_KAFKA_SASL_PASSWORD: secrets.kafkaPassword,
      };
      const [viaFile, viaEnvironment, without] = [topicName(), topicName(), topicName()];
      const runs = await Promise.all([
        runCliIn(cliEnv(), 'topics', 'create', viaFile, '--partitions', '1', '--config', config),
        runCliIn(cliEnv(environment), 'topics', 'create', viaEnvironment, '--partitions', '1'),
        // naive twin: the same command with the brokers only
        runCliIn(cliEnv({ KAFKA_BROKERS: broker.brokers.join(',') }), 'topics', 'create', without, '--partitions', '1'),
      ]);
      for (const run of runs) lines.push(run.stdout, run.stderr);
      assert.equal(runs[0].code, 0, runs[0].stderr);
      assert.match(runs[0].stdout, new RegExp(`created ${viaFile}`));
      assert.equal(runs[1].code, 0, runs[1].stderr);
      assert.equal(runs[2].code, 1);
      assert.match(runs[2].stderr, /EFF_BROKER_UNREACHABLE/);
      // a mistake in the file is named before anything runs
      writeFileSync(config, JSON.stringify({ kafka: { ...kafkaSection, sasl: { ...scram, mechanism: 'scram' } } }));
      const wrong = await runCliIn(cliEnv(), 'topics', 'create', topicName(), '--config', config);
      lines.push(wrong.stdout, wrong.stderr);
      assert.equal(wrong.code, 2);
      assert.match(wrong.stderr, /EFF_INVALID_OPTIONS: invalid option `config\.kafka\.sasl\.mechanism`/);
    });
  });

  test('no secret in any log line, error, dead letter, effect, or server log of these runs', async () => {
    const tables = await db.query<{ row: string }>(
      `SELECT row_to_json(d)::text AS row FROM ${schema}.dead_letters d
       UNION ALL SELECT row_to_json(e)::text FROM ${schema}.effects e`,
    );
    const searched = {
      'log lines': lines.join('\n'),
      errors: errors.map((error) => inspect(error, { depth: 8 })).join('\n'),
      'dead_letters and effects': tables.rows.map((row) => row.row).join('\n'),
      'broker log': broker.log(),
      'PostgreSQL log': postgres.log(),
    };
    // the search can find a secret: the failing run did write where it looks
    assert.ok(lines.length > 0 && errors.length >= 3 && tables.rows.length > orders, 'something to search');
    assert.match(searched['dead_letters and effects'], /cannot be paid/);
    assert.match(searched['dead_letters and effects'], /"last_error":"[^"]+"/);
    for (const [secret, text] of Object.entries(secrets)) {
      for (const [where, haystack] of Object.entries(searched)) {
        assert.ok(!haystack.includes(text), `${secret} found in the ${where}`);
      }
    }
  });

  test('naive twin: a logger handed the options would print the secrets, and the search finds them', () => {
    const naive = JSON.stringify({
      message: 'connecting',
      kafka: kafka({ sasl: scram }),
      database: url(secrets.pgPassword),
    });
    assert.ok(naive.includes(secrets.kafkaPassword) && naive.includes(secrets.pgPassword));
  });
});
