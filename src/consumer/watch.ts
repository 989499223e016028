// What a running consumer tells its operator: a line at start, one at each assignment, a warning when it has held no
// partition for a few seconds since it started or lost its last one (a restart's silent wait for the old member's
// session), and its
// `stats()` / `isRunning()` for a health check.
import { callBack } from '../observability/callback.ts';
import type { Logger } from '../observability/logger.ts';
import type { TopicPartition } from '../transport/port.ts';
import type { Outcome } from './types.ts';

export interface ConsumerStats {
  /** Started and not closed. */
  running: boolean;
  /** The partitions this member holds now, as `topic[partition]`. */
  partitions: string[];
  /** Events applied since start. */
  applied: number;
  /** Events passed over since start because their dedup row was there (redeliveries, replays). */
  duplicates: number;
  /** When partitions were last assigned to this member; null before the first assignment. */
  assignedAt: Date | null;
}

export interface WatchOptions {
  group: string;
  topics: readonly string[];
  /** The transport's name (`kafka`, `postgres`): what a member waits for differs. */
  transport: string;
  instanceId?: string | undefined;
  logger: Logger;
  /** How long a started consumer may hold no partition before it says why (default 5 s). */
  waitMs?: number;
}

/** Why a started member holds no partition yet, and what shortens the wait, for the transport it runs on. */
function waitingFor(options: WatchOptions): string {
  const seconds = (options.waitMs ?? 5000) / 1000;
  const none = `consumer ${options.group} has held no partition for ${seconds} s`;
  if (options.transport === 'postgres')
    return `${none}: waiting for the partitions' leases. A member that stopped without close() holds its leases until they run out (leaseMs, default 5 s); a group with more members than partitions leaves some members none`;
  const restart =
    options.instanceId === undefined
      ? "A restarted member waits for the group to drop the member it replaces, when that member's session expires (sessionTimeoutMs, 30 s by default): set `instanceId` (static membership, one stable id per process) and a restart takes its partitions back at once"
      : `With instanceId ${options.instanceId} (static membership) a restart takes its partitions back once the broker sees the member again`;
  return `${none}: waiting for the group coordinator to assign them. ${restart}. A group with more members than partitions leaves some members none; a topic that does not exist has none to assign`;
}

export function consumerWatch(options: WatchOptions) {
  const { logger, group } = options;
  const held = new Map<string, TopicPartition>();
  let running = false;
  let timer: NodeJS.Timeout | undefined;
  let applied = 0;
  let duplicates = 0;
  let assignedAt: Date | null = null;
  const name = (tp: TopicPartition) => `${tp.topic}[${tp.partition}]`;
  /** In `waitMs`, warns if the member still holds nothing. */
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (running && held.size === 0)
        logger.warn(waitingFor(options), { group, topics: options.topics, instanceId: options.instanceId ?? null });
    }, options.waitMs ?? 5000);
    timer.unref();
  };
  return {
    started(): void {
      running = true;
      logger.info('consumer started', {
        group,
        topics: options.topics,
        transport: options.transport,
        ...(options.instanceId === undefined ? {} : { instanceId: options.instanceId }),
      });
      arm();
    },
    assigned(partitions: TopicPartition[]): void {
      for (const tp of partitions) held.set(name(tp), tp);
      assignedAt = new Date();
      logger.info('partitions assigned', { group, partitions: partitions.map(name), holding: held.size });
    },
    revoked(partitions: TopicPartition[]): void {
      for (const tp of partitions) held.delete(name(tp));
      if (running && held.size === 0) arm(); // a rebalance that leaves this member nothing: said the same way
    },
    /** Counts outcomes for `stats()`, then calls the application's `onOutcome`, if any. */
    outcome<E>(then?: (event: E, outcome: Outcome) => void): (event: E, outcome: Outcome) => void {
      return (event, outcome) => {
        if (outcome === 'applied') applied++;
        else if (outcome === 'duplicate') duplicates++;
        callBack(logger, 'onOutcome', then, [event, outcome]);
      };
    },
    closed(): void {
      running = false;
      clearTimeout(timer);
    },
    isRunning: (): boolean => running,
    stats: (): ConsumerStats => ({ running, partitions: [...held.keys()], applied, duplicates, assignedAt }),
  };
}
