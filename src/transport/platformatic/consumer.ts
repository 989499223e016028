import type { Consumer as ClientConsumer, GroupAssignment } from '@platformatic/kafka';
import { EffectivelyError, ErrorCodes, invalidOptions } from '../../errors.ts';
import type { Logger } from '../../observability/logger.ts';
import { DEFAULT_COMMIT_INTERVAL_MS, DEFAULT_PREFETCH_KB } from '../kafka/consumer.ts';
import { OffsetCommitter } from '../kafka/offset-committer.ts';
import type { BatchHandler, Consumer, ConsumerOptions, TopicPartition, TopicPartitionOffset } from '../port.ts';
import { partitionId } from '../position.ts';
import type { ClientModule } from './client.ts';
import { Fetcher } from './fetcher.ts';

const EARLIEST = -2n;
const LATEST = -1n;
const REJOIN_AFTER_MS = 1000;

export interface PlatformaticConsumerSettings {
  brokers: string[];
  clientId: string;
  commitIntervalMs?: number | undefined;
  logger: Logger;
}

/**
 * The port's consumer on the pure-JavaScript client: the client keeps the group membership (join, sync, heartbeats,
 * rejoin); the fetch loop (fetcher.ts) is this transport's, for per-partition pause, seek and batches. Offsets are
 * committed only by the caller, after its database did, coalesced off the batch's path (the Kafka transport's
 * committer).
 *
 * Revoke: the client rejoins on its own when the group rebalances and tells only once the new assignment is there, so
 * a revoked partition's batch in flight is waited for (and `onRevoke` called, the last positions sent) after the group
 * may already have handed the partition on: its new owner may read records this member is still applying. Dedup and
 * version guards make that a redelivery, not a second effect; the Kafka transport waits before the partitions go.
 */
export class PlatformaticConsumer implements Consumer {
  readonly #client: ClientConsumer;
  readonly #options: ConsumerOptions;
  readonly #settings: PlatformaticConsumerSettings;
  readonly #abort = new AbortController();
  readonly #fetcher: Fetcher;
  readonly #committer: OffsetCommitter;
  /** Assignment changes, one after the other. */
  #changes: Promise<void> = Promise.resolve();
  #joining: Promise<void> | undefined;
  #closing: Promise<void> | undefined;

  constructor(client: ClientModule, options: ConsumerOptions, settings: PlatformaticConsumerSettings) {
    const inFlight = options.partitionsInFlight ?? 1;
    if (!Number.isInteger(inFlight) || inFlight < 1) throw invalidOptions('partitionsInFlight', 'a positive integer');
    this.#options = options;
    this.#settings = settings;
    const sessionTimeout = options.sessionTimeoutMs ?? 45_000;
    this.#client = new client.Consumer({
      clientId: settings.clientId,
      bootstrapBrokers: settings.brokers,
      groupId: options.group,
      autocommit: false,
      sessionTimeout,
      heartbeatInterval: Math.min(3000, Math.max(300, Math.floor(sessionTimeout / 10))),
      rebalanceTimeout: Math.max(sessionTimeout, 60_000),
      ...(options.instanceId === undefined ? {} : { groupInstanceId: options.instanceId }),
    });
    this.#client.on('consumer:group:join', ({ assignments }) => this.#onJoin(assignments ?? []));
    this.#client.on('error', (error: unknown) => this.#onGroupError(error));
    this.#fetcher = new Fetcher(this.#client, {
      maxBatchSize: options.maxBatchSize,
      partitionsInFlight: inFlight,
      maxWaitMs: options.maxWaitMs ?? 25,
      partitionMaxBytes: Math.min(1024 * 1024, (options.prefetchKb ?? DEFAULT_PREFETCH_KB) * 1024),
      signal: this.#abort.signal,
      logger: settings.logger,
      outOfRange: (positions) => this.#outOfRange(positions),
    });
    this.#committer = new OffsetCommitter(
      (offsets) =>
        this.#client.commit({
          offsets: offsets.map(({ topic, partition, offset }) => ({
            topic,
            partition,
            offset: BigInt(offset),
            leaderEpoch: -1,
          })),
        }),
      settings.commitIntervalMs ?? DEFAULT_COMMIT_INTERVAL_MS,
    );
  }

  async run(handler: BatchHandler): Promise<void> {
    if (this.#closing) throw new EffectivelyError(ErrorCodes.EFF_CLOSED, 'consumer is closed');
    this.#fetcher.start(handler);
    this.#client.topics.trackAll(...this.#options.topics);
    this.#joining ??= this.#join();
  }

  /** Joins the group, again and again until it is in or the consumer closes (a topic not there yet, a broker down). */
  async #join(): Promise<void> {
    while (!this.#abort.signal.aborted) {
      try {
        await this.#client.joinGroup({});
        return;
      } catch (error) {
        if (this.#abort.signal.aborted) return;
        this.#settings.logger.warn('kafka (pure JavaScript): joining the group failed; trying again', {
          group: this.#options.group,
          error: String(error),
        });
        await new Promise((resolve) => setTimeout(resolve, REJOIN_AFTER_MS));
      }
    }
  }

  /** The client gave up rejoining: what this member held is given up (as at a revoke), then it joins again. */
  #onGroupError(error: unknown): void {
    if (this.#abort.signal.aborted) return;
    this.#settings.logger.warn('kafka (pure JavaScript): the group was lost; joining again', {
      group: this.#options.group,
      error: String(error),
    });
    this.#onJoin([]);
    this.#joining = this.#changes.then(() => this.#join());
  }

  #onJoin(assignments: GroupAssignment[]): void {
    this.#changes = this.#changes
      .then(() => this.#reassign(assignments))
      .catch((error: unknown) => {
        this.#settings.logger.warn('kafka (pure JavaScript): taking an assignment failed', { error: String(error) });
      });
  }

  async #reassign(assignments: GroupAssignment[]): Promise<void> {
    if (this.#abort.signal.aborted) return;
    const now = assignments.flatMap(({ topic, partitions }) => partitions.map((partition) => ({ topic, partition })));
    const wanted = new Set(now.map(partitionId));
    const heldNow = this.#fetcher.held();
    const revoked = heldNow.filter((tp) => !wanted.has(partitionId(tp)));
    const held = new Set(heldNow.map(partitionId));
    const added = now.filter((tp) => !held.has(partitionId(tp)));
    if (revoked.length > 0) await this.#revoke(revoked);
    if (added.length > 0) {
      this.#fetcher.add(await this.#positions(added));
      this.#options.onAssign?.(added);
    }
  }

  async #revoke(partitions: TopicPartition[]): Promise<void> {
    await this.#fetcher.remove(partitions);
    try {
      await this.#options.onRevoke?.(partitions);
    } finally {
      await this.#committer.flush().catch(() => undefined);
      this.#committer.discard(partitions);
    }
  }

  /** Where each new partition starts: the group's committed offset, else the earliest or latest one. */
  async #positions(partitions: TopicPartition[]): Promise<{ tp: TopicPartition; position: bigint }[]> {
    const byTopic = new Map<string, number[]>();
    for (const { topic, partition } of partitions) byTopic.set(topic, [...(byTopic.get(topic) ?? []), partition]);
    const topics = [...byTopic].map(([topic, parts]) => ({ topic, partitions: parts }));
    const committed = await this.#client.listCommittedOffsets({ topics });
    const fallback = await this.#client.listOffsets({
      topics: [...byTopic.keys()],
      timestamp: this.#options.fromBeginning ? EARLIEST : LATEST,
    });
    return partitions.map((tp) => {
      const done = committed.get(tp.topic)?.[tp.partition] ?? -1n;
      return { tp, position: done >= 0n ? done : (fallback.get(tp.topic)?.[tp.partition] ?? 0n) };
    });
  }

  /**
   * Kafka's offset reset for positions the broker does not have: one before the earliest kept record or past the end
   * starts again at the earliest (`fromBeginning`) or the latest; one inside the range stays.
   */
  async #outOfRange(positions: { tp: TopicPartition; position: bigint }[]): Promise<bigint[]> {
    const topics = [...new Set(positions.map(({ tp }) => tp.topic))];
    const earliest = await this.#client.listOffsets({ topics, timestamp: EARLIEST });
    const latest = await this.#client.listOffsets({ topics, timestamp: LATEST });
    return positions.map(({ tp, position }) => {
      const low = earliest.get(tp.topic)?.[tp.partition] ?? 0n;
      const high = latest.get(tp.topic)?.[tp.partition] ?? 0n;
      if (position >= low && position <= high) return position;
      return this.#options.fromBeginning ? low : high;
    });
  }

  /** Notes the positions and returns at once with the broker's answer to come (as the Kafka transport). */
  commit(offsets: TopicPartitionOffset[]): Promise<void> {
    const held = new Set(this.#fetcher.held().map(partitionId));
    return this.#committer.commitHeld(offsets, (partition) => held.has(partition));
  }

  pause(partitions: TopicPartition[]): void {
    this.#fetcher.pause(partitions);
  }

  resume(partitions: TopicPartition[]): void {
    this.#fetcher.resume(partitions);
  }

  seek(position: TopicPartitionOffset): void {
    this.#fetcher.seek(position, BigInt(position.offset));
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#abort.abort(new EffectivelyError(ErrorCodes.EFF_CLOSED, 'consumer is closing'));
      await this.#fetcher.stop();
      await this.#changes;
      // as a revoke: the application hears the partitions go, and their last positions are sent
      await this.#revoke(this.#fetcher.held()).catch(() => undefined);
      await this.#joining?.catch(() => undefined);
      await this.#client.close().catch(() => undefined);
    })();
    return this.#closing;
  }
}
