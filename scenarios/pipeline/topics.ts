import { randomBytes } from 'node:crypto';
import { type Kafka, KafkaJS } from '../../src/transport/kafka/client.ts';
import { defaultBrokers } from '../../src/transport/kafka/config.ts';
import { clientLogLevels } from '../../src/transport/kafka/log.ts';

export interface PipelineTopics {
  input: string;
  output: string;
  deadLetter: string;
  group: string;
  partitions: number;
}

export function scenarioKafka(): Kafka {
  return new KafkaJS.Kafka({
    kafkaJS: { brokers: defaultBrokers(), clientId: 'pipeline-scenario', logLevel: clientLogLevels.error },
  });
}

/** One input far larger than the others: `{"seq": n, "pad": "xxx..."}` of about `bytes`, with a `seq` header. */
export interface BigInput {
  seq: number;
  bytes: number;
}

/**
 * Fresh topics (input, output, dead letters; same partition count) and a fresh group name. `maxMessageBytes`: the
 * output and dead-letter topics' `max.message.bytes` (default: the broker's).
 */
export async function createTopics(
  kafka: Kafka,
  partitions: number,
  options: { maxMessageBytes?: number } = {},
): Promise<PipelineTopics> {
  const tag = randomBytes(4).toString('hex');
  const topics = { input: `pipe-${tag}-in`, output: `pipe-${tag}-out`, deadLetter: `pipe-${tag}-dlt` };
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({
      topics: Object.values(topics).map((topic) => ({
        topic,
        numPartitions: partitions,
        replicationFactor: -1,
        ...(options.maxMessageBytes !== undefined && topic !== topics.input
          ? { configEntries: [{ name: 'max.message.bytes', value: String(options.maxMessageBytes) }] }
          : {}),
      })),
    });
  } finally {
    await admin.disconnect();
  }
  return { ...topics, group: `pipe-${tag}`, partitions };
}

export async function deleteTopics(kafka: Kafka, topics: PipelineTopics): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topics.input, topics.output, topics.deadLetter] }).catch(() => undefined);
  await admin.disconnect();
}

/** Sequence-numbered inputs, round-robin over the partitions, so each partition's inputs ascend. */
export async function seedInputs(kafka: Kafka, topics: PipelineTopics, count: number, big?: BigInput): Promise<void> {
  const producer = kafka.producer({
    kafkaJS: { idempotent: true, acks: -1 },
    'linger.ms': 20,
    'message.max.bytes': 16 * 1024 * 1024,
  });
  await producer.connect();
  try {
    for (let start = 0; start < count; start += 5000) {
      const messages = [];
      for (let seq = start; seq < Math.min(count, start + 5000); seq++) {
        const partition = seq % topics.partitions;
        if (seq === big?.seq) {
          const value = JSON.stringify({ seq, pad: 'x'.repeat(big.bytes) });
          messages.push({ partition, key: `k${seq}`, value, headers: { seq: String(seq) } });
        } else messages.push({ partition, key: `k${seq}`, value: JSON.stringify({ seq }) });
      }
      await producer.send({ topic: topics.input, messages });
    }
  } finally {
    await producer.disconnect();
  }
}

type Offsets = { partition: number; offset: string }[];

/** Whether the group's committed offsets reached the input's end offsets on every partition. */
export async function offsetsAtEnd(kafka: Kafka, topics: PipelineTopics): Promise<{ done: boolean; behind: number }> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const ends = (await admin.fetchTopicOffsets(topics.input)) as { partition: number; high: string }[];
    const [committed] = (await admin.fetchOffsets({ groupId: topics.group, topics: [topics.input] })) as {
      partitions: Offsets;
    }[];
    let behind = 0;
    for (const end of ends) {
      const at = committed?.partitions.find((p) => p.partition === end.partition)?.offset ?? '-1';
      behind += Number(end.high) - Math.max(0, Number(at));
    }
    return { done: behind === 0, behind };
  } finally {
    await admin.disconnect();
  }
}
