import type { Admin, Transport } from '../transport/port.ts';

/** One partition's lag: records written to it that the group has not committed yet. */
export interface PartitionLag {
  topic: string;
  partition: number;
  /** The next offset to be written (high watermark). */
  end: string;
  /** The group's next offset to read; `-1` when it never committed on this partition. */
  committed: string;
  /** `end - committed` (`end` when nothing was committed: counted from offset 0), never below 0. */
  lag: number;
}

export interface ConsumerLag {
  /** The sum over every partition of every topic. */
  total: number;
  partitions: PartitionLag[];
}

function isAdmin(source: Transport | Admin): source is Admin {
  return typeof (source as Admin).endOffsets === 'function';
}

/**
 * Consumer lag, the backlog a paused or slow consumer leaves in the log: per partition, end offset − committed offset
 * of `group`, from the transport's admin. Give a `Transport` (an admin is opened and closed per call) or an open
 * `Admin` to poll with (kept open). A partition the group never committed on counts from offset 0, so after the
 * broker's retention deleted old records its lag is overstated until the group's first commit.
 */
export async function consumerLag(
  source: Transport | Admin,
  group: string,
  topics: readonly string[],
): Promise<ConsumerLag> {
  const admin = isAdmin(source) ? source : source.admin();
  try {
    const partitions: PartitionLag[] = [];
    for (const topic of topics) {
      // Committed first, then the end: the end read later is never behind it. One after the other (an embedded
      // database is one session).
      const committed = await admin.committedOffsets(group, topic);
      const ends = await admin.endOffsets(topic);
      const byPartition = new Map(committed.map((c) => [c.partition, c.offset]));
      for (const end of ends) {
        const at = byPartition.get(end.partition) ?? '-1';
        const from = BigInt(at) < 0n ? 0n : BigInt(at);
        const lag = BigInt(end.offset) - from;
        partitions.push({
          topic,
          partition: end.partition,
          end: end.offset,
          committed: at,
          lag: lag > 0n ? Number(lag) : 0,
        });
      }
    }
    partitions.sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition);
    return { total: partitions.reduce((sum, p) => sum + p.lag, 0), partitions };
  } finally {
    if (!isAdmin(source)) await admin.close();
  }
}
