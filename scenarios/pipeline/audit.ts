import { randomBytes } from 'node:crypto';
import type { Kafka } from '../../src/transport/kafka/client.ts';
import { isPoison } from './records.ts';
import type { PipelineTopics } from './topics.ts';

export interface ReadRecord {
  partition: number;
  seq: number;
  headers: Record<string, string>;
}

async function endOffsets(kafka: Kafka, topic: string): Promise<Map<number, number>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const offsets = (await admin.fetchTopicOffsets(topic)) as { partition: number; high: string }[];
    return new Map(offsets.map(({ partition, high }) => [partition, Number(high)]));
  } finally {
    await admin.disconnect();
  }
}

/**
 * Every record of a topic as a reader with the given isolation level sees it, in order per partition. The writers are
 * done by then. Reading stops once every partition was read to its end (the last data record of a transactional
 * partition sits before the final commit marker, at end - 2) and nothing more came for a second; or, when a
 * read_committed reader cannot get that far (the tail is an aborted transaction), after `idleMs` without a record.
 */
export async function readTopic(
  kafka: Kafka,
  topic: string,
  isolation: 'read_committed' | 'read_uncommitted',
  idleMs = 5000,
): Promise<ReadRecord[]> {
  const ends = await endOffsets(kafka, topic);
  if ([...ends.values()].every((end) => end === 0)) return [];
  const consumer = kafka.consumer({
    kafkaJS: { groupId: `audit-${randomBytes(4).toString('hex')}`, fromBeginning: true, autoCommit: false },
    'isolation.level': isolation,
    'fetch.wait.max.ms': 50,
  });
  const records: ReadRecord[] = [];
  const reached = new Map<number, number>();
  const started = Date.now();
  let lastAt = 0;
  const atEnd = () => [...ends].every(([partition, end]) => end === 0 || (reached.get(partition) ?? -1) >= end - 2);
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic] });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        for (const message of batch.messages) {
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(message.headers ?? {})) headers[name] = String(value);
          // A dead letter too large for its topic went without its value: its input's `seq` header names it.
          const parsed = JSON.parse(message.value?.toString('utf8') ?? 'null') as { seq: number } | null;
          const seq = parsed?.seq ?? Number(headers.seq);
          records.push({ partition: batch.partition, seq, headers });
          reached.set(batch.partition, Number(message.offset));
        }
        lastAt = Date.now();
      },
    });
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const idle = Date.now() - (lastAt || started + 15_000);
      if (idle >= idleMs || (atEnd() && idle >= 1000)) break;
    }
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

/** `deadOnes`: inputs expected on the dead-letter topic besides the poison ones (e.g. one too large for the output). */
export async function audit(
  kafka: Kafka,
  topics: PipelineTopics,
  inputs: number,
  deadOnes: readonly number[] = [],
): Promise<Audit> {
  const dies = (seq: number) => isPoison(seq) || deadOnes.includes(seq);
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
  const misrouted = outputs.filter(({ seq }) => dies(seq)).length + dead.filter(({ seq }) => !dies(seq)).length;
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
