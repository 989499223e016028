// parallel: a handler that waits 5 ms on I/O, 50 keys on one partition — concurrency mode 'key' vs 'partition'.
import { createConsumer } from '../src/consumer/consumer.ts';
import type { Db } from '../src/db/port.ts';
import { encodeEvent } from '../src/envelope/cloudevents.ts';
import { silentLogger } from '../src/observability/logger.ts';
import { sleep } from '../src/observability/sleep.ts';
import type { Transport } from '../src/transport/port.ts';
import { benchEvent, clock, round, until } from './support.ts';

const handlerMs = 5;
/** Lanes in flight in 'key' mode (the default `max` is 16): each holds a connection, so the pool needs one more. */
export const lanes = 25;

/** Records of `keys` keys, round robin, on a one-partition topic. */
export async function preloadKeys(transport: Transport, topic: string, events: number, keys: number): Promise<void> {
  const producer = transport.producer();
  const records = Array.from({ length: events }, (_, n) => {
    const record = encodeEvent(benchEvent(topic, n));
    return { ...record, key: `key-${n % keys}` };
  });
  await producer.send(records);
  await producer.close();
}

async function consumeWith(
  db: Db,
  transport: Transport,
  schema: string,
  topic: string,
  events: number,
  mode: 'partition' | 'key',
  group: string,
) {
  const timer = clock(events);
  const consumer = createConsumer({
    db,
    transport,
    group,
    topics: [topic],
    schema,
    maxBatchSize: 500,
    concurrency: { mode, max: lanes },
    logger: silentLogger,
    handler: () => sleep(handlerMs),
    onOutcome: () => timer.add(1),
  });
  await consumer.start();
  await until(() => timer.done, 600_000, `the ${mode} mode consume`);
  await consumer.close();
  return timer.result();
}

/** Records/s of a 5 ms handler over `keys` keys of one partition in `'key'` mode, and the speedup over `'partition'`. */
export async function keyParallelSpeedup(
  db: Db,
  transport: Transport,
  schema: string,
  topic: string,
  id: string,
  keys = 50,
) {
  const partitionEvents = 1000; // 5 ms each, one at a time: about 5 s
  const keyEvents = 5000;
  await preloadKeys(transport, topic, keyEvents, keys);
  const partition = await consumeWith(db, transport, schema, topic, partitionEvents, 'partition', `parallel-p-${id}`);
  const key = await consumeWith(db, transport, schema, topic, keyEvents, 'key', `parallel-k-${id}`);
  return { keys, handler_ms: handlerMs, partition, key, speedup: round(key.eps / partition.eps, 1) };
}
