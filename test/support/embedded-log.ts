// The embedded log for one test: a fresh schema on the real PostgreSQL, the postgres transport over it, one-partition
// topics holding small keyed events, and the options every consumer of such a test shares.
import type { TestContext } from 'node:test';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import type { Transport } from '../../src/transport/port.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { freshSchema } from './fixtures.ts';

/** Creates `topic` with one partition and sends one event per key, in order; event `n` carries `data: { n }`. */
export async function sendKeyed(transport: Transport, topic: string, keys: string[], source = '/t'): Promise<void> {
  await transport.admin().createTopics([{ topic, partitions: 1 }]);
  const producer = transport.producer();
  await producer.send(keys.map((key, n) => encodeEvent(createEvent({ topic, type: 't', source, key, data: { n } }))));
  await producer.close();
}

export async function embeddedLog(t: TestContext) {
  const { db, schema } = await freshSchema(t);
  const transport = postgresTransport({ db, schema, pollIntervalMs: 20, logger: silentLogger });
  /** What every consumer of the test shares: group `g` on `topic`, in the test's schema, logging nothing. */
  const consumerOf = (topic: string) => ({ db, transport, group: 'g', topics: [topic], schema, logger: silentLogger });
  return { db, schema, transport, consumerOf };
}
