// The Kafka producer's old send, for naive twins: the client's sendBatch, which goes on producing the rest of a send
// behind a record its produce() refused (too large for the producer, the local queue full).
import { KafkaJS } from '../../src/transport/kafka/client.ts';
import { defaultBrokers } from '../../src/transport/kafka/config.ts';
import type { OutgoingRecord, Producer } from '../../src/transport/port.ts';

export function sendBatchProducer(rdkafka: Record<string, string | number | boolean>): Producer {
  const kafka = new KafkaJS.Kafka({ kafkaJS: { brokers: defaultBrokers(), logLevel: KafkaJS.logLevel.NOTHING } });
  const client = kafka.producer({ kafkaJS: { idempotent: true, acks: -1 }, 'linger.ms': 1, ...rdkafka });
  return {
    connect: () => client.connect(),
    async send(records: readonly OutgoingRecord[]) {
      type Message = { key: string | Buffer | null; value: Buffer | null; headers: Record<string, string | Buffer> };
      const byTopic = new Map<string, Message[]>();
      for (const record of records) {
        const messages = byTopic.get(record.topic) ?? [];
        byTopic.set(record.topic, messages);
        messages.push({ key: record.key, value: record.value, headers: record.headers });
      }
      await client.sendBatch({ topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
    },
    close: () => client.disconnect(),
  };
}
