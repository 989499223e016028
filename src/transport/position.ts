import type { TopicPartitionOffset } from './port.ts';

/** The position to commit once `record` is done: its offset + 1 (offsets are 64-bit decimal strings). */
export function positionAfter(record: { topic: string; partition: number; offset: string }): TopicPartitionOffset {
  return { topic: record.topic, partition: record.partition, offset: (BigInt(record.offset) + 1n).toString() };
}
