// The client's lower-level consumer read raw: `consume(1000)` in a loop, librdkafka's auto-commit, no KafkaJS layer.
// What the native conversion alone costs (bench/headers.ts, bench/read-profile.ts).
import client from '@confluentinc/kafka-javascript';
import { defaultBrokers } from '../src/transport/kafka/config.ts';
import { clock, type Run } from './support.ts';

export async function consumeLowLevel(topic: string, events: number, group: string): Promise<Run> {
  const consumer = new client.KafkaConsumer(
    { 'group.id': group, 'metadata.broker.list': defaultBrokers().join(','), 'enable.auto.commit': true },
    { 'auto.offset.reset': 'earliest' },
  );
  await new Promise<void>((resolve, reject) => consumer.connect({}, (error) => (error ? reject(error) : resolve())));
  consumer.subscribe([topic]);
  const timer = clock(events);
  while (!timer.done) {
    const messages = await new Promise<unknown[]>((resolve, reject) =>
      consumer.consume(1000, (error, batch) => (error ? reject(error) : resolve(batch))),
    );
    if (messages.length > 0) timer.add(messages.length);
  }
  await new Promise<void>((resolve) => consumer.disconnect(() => resolve()));
  return timer.result();
}

interface NativeMessage {
  value: Buffer | null;
  key: Buffer | null;
  headers?: Record<string, Buffer>[];
  topic: string;
  partition: number;
  offset: number;
  timestamp: number;
}

/** The native message's header list as the port's headers: one Buffer per name, the last of a repeated name. */
function headersOf(list: Record<string, Buffer>[] | undefined): Record<string, Buffer> {
  const headers: Record<string, Buffer> = {};
  if (!list) return headers;
  for (let n = 0; n < list.length; n++) {
    const one = list[n]!;
    const names = Object.keys(one);
    for (let k = 0; k < names.length; k++) if (names[k] !== '__proto__') headers[names[k]!] = one[names[k]!]!;
  }
  return headers;
}

/**
 * What a transport on the lower-level API would read at, before anything else it would need (rebalance, pause and
 * resume, revoke that waits): `consume(1000)` with the transport's fetch settings, each call's messages split per
 * partition into the port's records in one conversion (no KafkaJS layer between), a no-op handler per partition's
 * batch, and the last position of each partition committed after its batch, asynchronously (as the transport notes it).
 */
export async function consumeLowLevelRecords(topic: string, events: number, group: string): Promise<Run> {
  const consumer = new client.KafkaConsumer(
    {
      'group.id': group,
      'metadata.broker.list': defaultBrokers().join(','),
      'enable.auto.commit': false,
      'isolation.level': 'read_committed',
      'fetch.wait.max.ms': 25,
      'queued.max.messages.kbytes': 2048,
      'queued.min.messages': 100_000,
      'fetch.queue.backoff.ms': 10,
      'socket.nagle.disable': true,
    },
    { 'auto.offset.reset': 'earliest' },
  );
  await new Promise<void>((resolve, reject) => consumer.connect({}, (error) => (error ? reject(error) : resolve())));
  consumer.subscribe([topic]);
  const timer = clock(events);
  const handler = async (records: unknown[]) => records.length;
  while (!timer.done) {
    const messages = await new Promise<NativeMessage[]>((resolve, reject) =>
      consumer.consume(1000, (error, batch) => (error ? reject(error) : resolve(batch as unknown as NativeMessage[]))),
    );
    const byPartition = new Map<number, unknown[]>();
    for (let n = 0; n < messages.length; n++) {
      const message = messages[n]!;
      const records = byPartition.get(message.partition) ?? [];
      if (records.length === 0) byPartition.set(message.partition, records);
      records.push({
        topic: message.topic,
        partition: message.partition,
        offset: String(message.offset),
        key: message.key ?? null,
        value: message.value ?? null,
        headers: headersOf(message.headers),
        timestamp: message.timestamp,
      });
    }
    for (const [partition, records] of byPartition) {
      await handler(records);
      const last = records.at(-1) as { offset: string };
      consumer.commit({ topic, partition, offset: Number(last.offset) + 1 });
    }
    if (messages.length > 0) timer.add(messages.length);
  }
  await new Promise<void>((resolve) => consumer.disconnect(() => resolve()));
  return timer.result();
}
