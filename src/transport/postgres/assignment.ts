import type { TopicPartition } from '../port.ts';
import { partitionId } from '../position.ts';

export const keyOf = partitionId;

/**
 * This member's share of the group's partitions: live members sorted by id get them round-robin, in the stable order
 * the heartbeat returned them. Every member computes the same deal from the same rows.
 */
export function shareOf(
  memberId: string,
  members: string[],
  partitions: TopicPartition[],
): Map<string, TopicPartition> {
  const sorted = [...new Set([...members, memberId])].sort();
  const index = sorted.indexOf(memberId);
  const mine = new Map<string, TopicPartition>();
  partitions.forEach((tp, i) => {
    if (i % sorted.length === index) mine.set(keyOf(tp), { topic: tp.topic, partition: tp.partition });
  });
  return mine;
}
