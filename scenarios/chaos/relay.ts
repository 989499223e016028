// Child process: the outbox relay, with the crash switch at `relay:after-publish`.
import { createRelay } from '../../src/outbox/relay.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { configFromEnv } from './config.ts';
import { announceReady, crashSwitch } from './crash.ts';
import { chaosDb } from './db.ts';

const config = configFromEnv();
const relay = createRelay({
  db: chaosDb(),
  producer: kafkaTransport().producer({ clientId: 'chaos-relay' }),
  schema: config.schema,
  batchSize: 200,
  faults: crashSwitch(),
});
await relay.start();
process.on('SIGTERM', () => void relay.close().then(() => process.exit(0)));
announceReady();
