// A topic of its own whose broker-side `max.message.bytes` refuses big records (the library's admin sets no topic
// configs), deleted after the test. Real broker.
import type { TestContext } from 'node:test';
import { KafkaJS } from '../../src/transport/kafka/client.ts';
import { defaultBrokers } from '../../src/transport/kafka/config.ts';
import { randomName } from './fixtures.ts';

export async function smallTopic(
  t: TestContext,
  options: { maxMessageBytes: number; partitions?: number; prefix?: string },
): Promise<string> {
  const kafka = new KafkaJS.Kafka({
    kafkaJS: { brokers: defaultBrokers(), clientId: 'effectively-test', logLevel: KafkaJS.logLevel.ERROR },
  });
  const admin = kafka.admin();
  await admin.connect();
  const topic = randomName(options.prefix ?? 'small').replace('_', '-');
  await admin.createTopics({
    topics: [
      {
        topic,
        numPartitions: options.partitions ?? 1,
        replicationFactor: 1,
        configEntries: [{ name: 'max.message.bytes', value: String(options.maxMessageBytes) }],
      },
    ],
  });
  t.after(async () => {
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
  });
  return topic;
}
