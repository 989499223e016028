// client_raw: the Confluent client used directly — no processing, `eachBatch`, librdkafka's periodic auto-commit, the
// client's own defaults otherwise — the ceiling the project's transport is measured against (transport_vs_client).
import client from '@confluentinc/kafka-javascript';
import { defaultBrokers } from '../src/transport/kafka/config.ts';
import { clock, type Run, until } from './support.ts';

export async function consumeClientRaw(topic: string, events: number, group: string): Promise<Run> {
  const timer = clock(events);
  const kafka = new client.KafkaJS.Kafka({
    kafkaJS: { brokers: defaultBrokers(), clientId: 'bench-client-raw', logLevel: client.KafkaJS.logLevel.ERROR },
  });
  const consumer = kafka.consumer({
    kafkaJS: { groupId: group, fromBeginning: true, autoCommit: true },
    // The same batch size as the transport's raw run (the client's default is 32).
    'js.consumer.max.batch.size': 1000,
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic] });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      timer.add(batch.messages.length);
    },
  });
  await until(() => timer.done, 600_000, 'client raw consume');
  await consumer.disconnect();
  return timer.result();
}
