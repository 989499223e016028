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
