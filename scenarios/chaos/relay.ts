// Child process: the outbox relay, with the crash switch at `relay:after-publish`. Its start waits out outages (the
// broker or PostgreSQL restarting): a refused start makes a new relay. The relay makes its producers itself
// (`producerFactory`), so a producer that fails fatally (fenced, librdkafka's fatal error) is replaced, not fatal.
import { createRelay } from '../../src/outbox/relay.ts';
import { configFromEnv } from './config.ts';
import { announce, announceReady, crashSwitch, firstApplied } from './crash.ts';
import { chaosDb } from './db.ts';
import { untilUp } from './retry.ts';
import { chaosTransport } from './transport.ts';

announce('loaded');
const config = configFromEnv();
const db = chaosDb();
const faults = crashSwitch();
const published = firstApplied();
const transport = chaosTransport(config, 'chaos-relay');
const relay = await untilUp(
  async () => {
    const relay = createRelay({
      db,
      producerFactory: () => transport.producer(),
      schema: config.schema,
      source: config.relay,
      // The relay streams from the cluster the kit gave it (DATABASE_URL: the private one, with logical decoding).
      ...(config.relay === 'wal' ? { wal: { connectionString: process.env.DATABASE_URL ?? '' } } : {}),
      batchSize: 200,
      faults,
      onPublished: published,
    });
    try {
      await relay.start();
      return relay;
    } catch (error) {
      await relay.close().catch(() => undefined);
      throw error;
    }
  },
  { what: 'relay start', retryAll: true, log: (line) => console.error(line) },
);
process.on('SIGTERM', () => void relay.close().then(() => process.exit(0)));
announceReady();
