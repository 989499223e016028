import { sleep } from '../observability/sleep.ts';
import type { ClientConsumer } from './clients.ts';

/**
 * After a transaction that did not commit, the partition is read again from the offset the group has committed on the
 * broker (not from where this batch began: a commit whose outcome we did not hear may have committed after all). The
 * consumer is read_committed, so the broker answers only once no transaction holds that offset open (KIP-447).
 * A partition no longer assigned is left alone: its next owner starts from the committed offset, and a seek on it
 * would be kept by the client and replayed, stale, at a later assignment.
 */
export async function rewind(
  consumer: ClientConsumer,
  position: { topic: string; partition: number; firstOffset: string },
  stopped: () => boolean,
): Promise<void> {
  const { topic, partition } = position;
  for (let attempt = 0; !stopped(); attempt++) {
    const assigned = consumer.assignment().some((tp) => tp.topic === topic && tp.partition === partition);
    if (!assigned) return;
    try {
      const [committed] = await consumer.committed([{ topic, partition }], 30_000);
      const offset = committed?.offset;
      // Nothing committed yet: this partition's first batch since the group began (its records start the partition).
      const target = offset !== undefined && Number(offset) >= 0 ? offset : position.firstOffset;
      consumer.seek({ topic, partition, offset: target });
      return;
    } catch {
      await sleep(Math.min(5000, 200 * 2 ** attempt));
    }
  }
}
