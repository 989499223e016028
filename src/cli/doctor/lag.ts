import { consumerLag } from '../../backpressure/lag.ts';
import type { Admin } from '../../transport/port.ts';
import { type Finding, finding } from './finding.ts';

/** One line per group: its lag over `topics`, a warning over `maxLag` records. */
export async function checkLag(
  admin: Admin,
  group: string,
  topics: readonly string[],
  maxLag: number,
): Promise<Finding> {
  if (topics.length === 0)
    return finding(
      'skip',
      'lag',
      `group ${group}: no topic to measure (it committed nothing yet; name them with --topic)`,
    );
  const lag = await consumerLag(admin, group, topics);
  const worst = lag.partitions.reduce((a, b) => (b.lag > a.lag ? b : a), lag.partitions[0]!);
  const where = worst && worst.lag > 0 ? `, the most on ${worst.topic}[${worst.partition}] (${worst.lag})` : '';
  const what = `group ${group}: lag ${lag.total} records on ${lag.partitions.length} partitions of ${topics.join(', ')}${where}`;
  if (lag.total > maxLag)
    return finding(
      'warn',
      'lag',
      `${what} (over ${maxLag})`,
      'check that the group runs and keeps up (more instances up to the partition count, `concurrency`); raise --max-lag if this backlog is normal',
    );
  return finding('ok', 'lag', what);
}
