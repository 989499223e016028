// The Kafka client (an optional peer dependency with a native module) is loaded by `kafkaTransport()` only: importing
// the library, embedded use and the offline CLI never load it. Each check runs in a fresh process and reads Node's
// module cache, where a loaded client (and its native module) would be.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { KafkaJS } from '../../src/transport/kafka/client.ts';
import { clientLogLevels } from '../../src/transport/kafka/log.ts';

const index = new URL('../../src/index.ts', import.meta.url).href;
const cli = fileURLToPath(new URL('../../bin/effectively.js', import.meta.url));

// Preloaded into the child: on exit, says whether any file of the Kafka client is in Node's module cache.
const probe = `data:text/javascript,${encodeURIComponent(`import { createRequire } from 'node:module';
process.on('exit', () => {
  const files = Object.keys(createRequire(process.cwd() + '/').cache);
  process.stderr.write('kafka-client-loaded=' + files.some((file) => file.includes('kafka-javascript')) + '\\n');
});`)}`;

/** Runs node with `args` (tsx and the probe preloaded) to its end; whether it loaded the Kafka client. */
async function loadsKafkaClient(...args: string[]): Promise<boolean> {
  const { stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--import', probe, ...args]).catch(
    (error: { stderr: string }) => error,
  );
  const answer = /kafka-client-loaded=(true|false)/.exec(stderr)?.[1];
  assert.ok(answer, `the probe did not report: ${stderr}`);
  return answer === 'true';
}

const inline = (code: string) => ['--input-type=module', '-e', code];

test('importing the library and running embedded does not load the Kafka client', async () => {
  const embedded = `
import { createConsumer, createEvent, createOutbox, createRelay, migrate, pgliteDb, postgresTransport } from '${index}';
const db = await pgliteDb();
await migrate(db);
const transport = postgresTransport({ db });
await db.transaction((tx) => createOutbox().enqueue(tx, createEvent({
  topic: 'orders', type: 't', source: '/s', key: 'k', version: 1, data: {} })));
const relay = createRelay({ db, producer: transport.producer() });
await relay.start();
let seen;
const got = new Promise((resolve) => { seen = resolve; });
const consumer = createConsumer({ db, transport, group: 'g', topics: ['orders'], handler: async () => seen() });
await consumer.start();
await got;
await consumer.close(); await relay.close(); await db.close();`;
  assert.equal(await loadsKafkaClient(...inline(embedded)), false);
});

test('kafkaTransport() loads it (the check sees a loaded client)', async () => {
  assert.equal(await loadsKafkaClient(...inline(`import { kafkaTransport } from '${index}'; kafkaTransport();`)), true);
});

test('the offline CLI (usage, schema check) does not load it', async () => {
  assert.equal(await loadsKafkaClient(cli, '--help'), false);
  assert.equal(await loadsKafkaClient(cli, 'schema', 'check'), false);
});

test('the client log levels written out in log.ts are the client’s own', () => {
  assert.deepEqual(clientLogLevels, {
    error: KafkaJS.logLevel.ERROR,
    warn: KafkaJS.logLevel.WARN,
    info: KafkaJS.logLevel.INFO,
    debug: KafkaJS.logLevel.DEBUG,
  });
});
