import type { TopicPartitionOffset } from './port.ts';

/** The position to commit once `record` is done: its offset + 1 (offsets are 64-bit decimal strings). */
export function positionAfter(record: { topic: string; partition: number; offset: string }): TopicPartitionOffset {
  return { topic: record.topic, partition: record.partition, offset: (BigInt(record.offset) + 1n).toString() };
}

/** One text id per partition (`topic\0partition`: NUL cannot occur in a topic name), for maps and sets. */
export function partitionId(tp: { topic: string; partition: number }): string {
  return `${tp.topic}\u0000${tp.partition}`;
}
