// Child process: the outbox relay, with the crash switch at `relay:after-publish`. Its start waits out outages (the
// broker or PostgreSQL restarting): a refused start makes a new relay (a relay closes the producer it was given).
import { createRelay } from '../../src/outbox/relay.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { configFromEnv } from './config.ts';
import { announceReady, crashSwitch } from './crash.ts';
import { chaosDb } from './db.ts';
import { untilUp } from './retry.ts';

const config = configFromEnv();
const db = chaosDb();
const faults = crashSwitch();
const relay = await untilUp(
  async () => {
    const relay = createRelay({
      db,
      producer: kafkaTransport().producer({ clientId: 'chaos-relay' }),
      schema: config.schema,
      batchSize: 200,
      faults,
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
