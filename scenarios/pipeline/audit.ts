import { randomBytes } from 'node:crypto';
import type { Kafka } from '../../src/transport/kafka/client.ts';
import { isPoison } from './records.ts';
import type { PipelineTopics } from './topics.ts';

export interface ReadRecord {
  partition: number;
  seq: number;
}

/**
 * Every record of a topic as a reader with the given isolation level sees it, in order per partition. Read until
 * nothing new came for `idleMs` (the child is closed by then, so nothing more is coming).
 */
export async function readTopic(
  kafka: Kafka,
  topic: string,
  isolation: 'read_committed' | 'read_uncommitted',
  idleMs = 3000,
): Promise<ReadRecord[]> {
  const consumer = kafka.consumer({
    kafkaJS: { groupId: `audit-${randomBytes(4).toString('hex')}`, fromBeginning: true, autoCommit: false },
    'isolation.level': isolation,
    'fetch.wait.max.ms': 50,
  });
  const records: ReadRecord[] = [];
  let lastAt = Date.now();
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic] });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        for (const message of batch.messages) {
          const { seq } = JSON.parse(message.value?.toString('utf8') ?? 'null') as { seq: number };
          records.push({ partition: batch.partition, seq });
        }
        lastAt = Date.now();
      },
    });
    while (Date.now() - lastAt < idleMs) await new Promise((resolve) => setTimeout(resolve, 200));
  } finally {
    await consumer.disconnect();
  }
  return records;
}

export interface Audit {
  inputs: number;
  /** Committed records on the output and dead-letter topics (read_committed). */
  outputs: number;
  duplicates: number;
  lost: number;
  /** Records a read_uncommitted reader sees beyond the committed ones: aborted copies (0 without transactions). */
  abortedSeen: number;
  deadLettered: number;
  /** Poison inputs that reached the output topic, or good ones that reached the dead-letter topic. */
  misrouted: number;
  /** Output partitions whose sequence numbers do not ascend (read_committed). */
  outOfOrder: number;
}

export async function audit(kafka: Kafka, topics: PipelineTopics, inputs: number): Promise<Audit> {
  const [outputs, dead, rawOutputs, rawDead] = await Promise.all([
    readTopic(kafka, topics.output, 'read_committed'),
    readTopic(kafka, topics.deadLetter, 'read_committed'),
    readTopic(kafka, topics.output, 'read_uncommitted'),
    readTopic(kafka, topics.deadLetter, 'read_uncommitted'),
  ]);
  const seen = new Set<number>();
  for (const { seq } of [...outputs, ...dead]) seen.add(seq);
  let lost = 0;
  for (let seq = 0; seq < inputs; seq++) if (!seen.has(seq)) lost += 1;
  const misrouted = outputs.filter(({ seq }) => isPoison(seq)).length + dead.filter(({ seq }) => !isPoison(seq)).length;
  const last = new Map<number, number>();
  let outOfOrder = 0;
  for (const { partition, seq } of outputs) {
    if ((last.get(partition) ?? -1) >= seq) outOfOrder += 1;
    last.set(partition, seq);
  }
  const committed = outputs.length + dead.length;
  return {
    inputs,
    outputs: committed,
    duplicates: committed - seen.size,
    lost,
    abortedSeen: rawOutputs.length + rawDead.length - committed,
    deadLettered: dead.length,
    misrouted,
    outOfOrder,
  };
}
