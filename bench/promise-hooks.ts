// Does a started Kafka consumer make every promise of the process dearer? The client's KafkaJS-style consumer runs its
// fetch loop inside a lock that enters an AsyncLocalStorage; on Node 20 and 22 the first `run()` of any
// AsyncLocalStorage turns on async_hooks' promise hooks for the whole process, for good (not on Node 24, nor on 22 with
// --experimental-async-context-frame: AsyncContextFrame). This times a million awaited async calls before, then after
// the consumer started (from the main context and from inside a batch handler); with --als, a bare
// AsyncLocalStorage.run() instead, in a process without Kafka. Results: docs/kafka.md, "Node 20: ... promise hooks".
//   node --import tsx bench/promise-hooks.ts            the consumer (needs the broker)
//   node --import tsx bench/promise-hooks.ts --als      a bare AsyncLocalStorage, no Kafka
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { kafkaTransport } from '../src/transport/kafka/transport.ts';

const CALLS = 1_000_000;

async function step(n: number): Promise<number> {
  return n + 1;
}

/** Best of five: ms for a million awaited async calls, each awaited twice more (the shape of a handler's chain). */
async function awaitedCalls(): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 5; round++) {
    const started = performance.now();
    let n = 0;
    for (let i = 0; i < CALLS; i++) n = await step(await Promise.resolve(n));
    best = Math.min(best, performance.now() - started);
    if (n !== CALLS) throw new Error('miscounted');
  }
  return best;
}

const line = (label: string, ms: number, base: number) =>
  console.log(`${label.padEnd(34)} ${ms.toFixed(0).padStart(6)} ms  x${(ms / base).toFixed(2)}`);

async function bareStorage(): Promise<void> {
  await awaitedCalls(); // warm-up: the first rounds run before the optimizing compiler is done
  const before = await awaitedCalls();
  line('before', before, before);
  const storage = new AsyncLocalStorage<object>();
  line('after new AsyncLocalStorage()', await awaitedCalls(), before);
  await storage.run({}, async () => line('inside storage.run()', await awaitedCalls(), before));
  line('after storage.run() returned', await awaitedCalls(), before);
}

async function startedConsumer(): Promise<void> {
  await awaitedCalls();
  const before = await awaitedCalls();
  line('before', before, before);
  const transport = kafkaTransport({ clientLogLevel: 'error' });
  const topic = `hooks-${randomUUID()}`;
  const admin = transport.admin();
  await admin.createTopics([{ topic, partitions: 1 }]);
  const producer = transport.producer();
  await producer.send([{ topic, key: 'k', value: Buffer.from('v'), headers: {} }]);
  const consumer = transport.consumer({ group: topic, topics: [topic], maxBatchSize: 100, fromBeginning: true });
  let inside: Promise<number> | undefined;
  const handled = new Promise<void>((resolve) => {
    void consumer.run(async () => {
      inside ??= awaitedCalls();
      await inside;
      resolve();
    });
  });
  await handled;
  line('inside the batch handler', await inside!, before);
  line('main context, consumer running', await awaitedCalls(), before);
  await consumer.close();
  await producer.close();
  await admin.deleteTopics([topic]).catch(() => undefined);
  await admin.close();
  line('main context, consumer closed', await awaitedCalls(), before);
}

console.log(`node ${process.version}, ${CALLS} awaited calls, best of 5`);
await (process.argv.includes('--als') ? bareStorage() : startedConsumer());
