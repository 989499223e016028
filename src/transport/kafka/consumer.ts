import { EffectivelyError, ErrorCodes, invalidOptions } from '../../errors.ts';
import { type Logger, stderrLogger } from '../../observability/logger.ts';
import type {
  BatchHandler,
  Consumer,
  ConsumerOptions,
  IncomingRecord,
  TopicPartition,
  TopicPartitionOffset,
} from '../port.ts';
import { partitionId } from '../position.ts';
import { CODES, type Kafka } from './client.ts';
import { DEFAULT_CLOSE_TIMEOUT_MS, disconnectWithin, UnansweredCommits } from './close.ts';
import { recordsOf } from './headers.ts';
import { OffsetCommitter } from './offset-committer.ts';
import { silentConnectionBounds } from './producer.ts';

type ClientConsumer = ReturnType<Kafka['consumer']>;
type RebalanceFns = { assign: (a: unknown[]) => void; unassign: (a: unknown[]) => void };
type CommitResult = (
  error: { code?: number } | undefined,
  offsets: { topic: string; partition: number; offset: number }[],
) => void;
type InternalClient = { on(event: 'offset.commit', listener: CommitResult): void };

/**
 * Commit refusals worth sending the position again for: the group moved on (rebalance, new generation or member epoch)
 * or the coordinator did not answer. Others (authorization, bad request) would be refused again: dropped as before.
 */
const RETRIED = [
  'ERR_ILLEGAL_GENERATION',
  'ERR_UNKNOWN_MEMBER_ID',
  'ERR_REBALANCE_IN_PROGRESS',
  'ERR_STALE_MEMBER_EPOCH',
  'ERR_NOT_COORDINATOR',
  'ERR_COORDINATOR_NOT_AVAILABLE',
  'ERR_COORDINATOR_LOAD_IN_PROGRESS',
  'ERR_REQUEST_TIMED_OUT',
  'ERR__TRANSPORT',
  'ERR__TIMED_OUT',
  'ERR__WAIT_COORD',
] as const;

/** Transport-wide consumer settings (from `kafkaTransport`'s options). */
export interface KafkaConsumerTuning {
  /** Least time between two offset commits to the broker (positions noted meanwhile go in one). Default 100 ms. */
  commitIntervalMs?: number | undefined;
  /** How long `close()` waits for the client's close (default 10 s); then it logs `EFF_CLOSE_TIMEOUT` and returns. */
  closeTimeoutMs?: number | undefined;
  /** Where that line goes. */
  logger?: Logger | undefined;
}

export const DEFAULT_COMMIT_INTERVAL_MS = 100;
export const DEFAULT_PREFETCH_KB = 2048;

/**
 * Batch consumer over the client's KafkaJS-style API. Offsets are never auto-committed: the caller commits after its
 * database did, and the commit goes to the broker off the batch's path (coalesced per partition, see
 * offset-committer.ts; revoke and close send the last positions and wait). Batches of up to `partitionsInFlight`
 * partitions run at once (the client's `partitionsConsumedConcurrently`), one batch per partition at a time. A revoke
 * waits for the revoked partitions' batches in flight, and only theirs, before they go: a revoked partition never has
 * a batch half-applied. With the default (eager) assignors every partition is revoked at each rebalance; with
 * `cooperative-sticky` only the moved ones are (docs/concurrency.md).
 */
export class KafkaConsumer implements Consumer {
  readonly #client: ClientConsumer;
  readonly #options: ConsumerOptions;
  readonly #abort = new AbortController();
  /** Batches in flight per partition (`topic\0partition`). */
  readonly #inFlight = new Map<string, Set<Promise<void>>>();
  readonly #committer: OffsetCommitter;
  readonly #unanswered = new UnansweredCommits();
  readonly #tuning: KafkaConsumerTuning;
  /** Partitions this member holds (`topic\0partition`): commits of others are dropped. */
  readonly #assigned = new Set<string>();
  #connecting: Promise<void> | undefined;
  #closing: Promise<void> | undefined;
  #listening = false;

  constructor(
    kafka: Kafka,
    options: ConsumerOptions,
    rdkafka: Record<string, string | number | boolean>,
    tuning: KafkaConsumerTuning = {},
  ) {
    this.#options = options;
    this.#tuning = tuning;
    const inFlight = options.partitionsInFlight ?? 1;
    if (!Number.isInteger(inFlight) || inFlight < 1) throw invalidOptions('partitionsInFlight', 'a positive integer');
    this.#committer = new OffsetCommitter((offsets) => {
      this.#unanswered.sent(offsets);
      return this.#client.commitOffsets(offsets);
    }, tuning.commitIntervalMs ?? DEFAULT_COMMIT_INTERVAL_MS);
    this.#client = kafka.consumer({
      kafkaJS: { groupId: options.group, fromBeginning: options.fromBeginning, autoCommit: false },
      'js.consumer.max.batch.size': options.maxBatchSize,
      'isolation.level': 'read_committed',
      // How long the broker may hold a fetch that has nothing new: short, so a fresh record reaches the handler fast.
      'fetch.wait.max.ms': options.maxWaitMs ?? 25,
      // What is read ahead of the handler is capped in bytes (issue 13; measured in docs/kafka.md "Memory"): the
      // prefetch queue (`prefetchKb`, default 2 MB; the count limit set high so the bytes bind) and the client's
      // JavaScript-side cache (1 ms of consumption, which the client rounds up to one batch per partition in flight;
      // its default 1.5 s). A full queue makes librdkafka put off the partition's next fetch by
      // `fetch.queue.backoff.ms`: its 1 s default is what made a small prefetch slow (4 MB read at half the rate); at
      // 10 ms a 2 MB queue reads as fast as 8 MB did, at about half the peak RSS. Fetch sizes stay librdkafka's (50 MB,
      // 1 MB per partition). Each can be set through `rdkafka`.
      'queued.max.messages.kbytes': options.prefetchKb ?? DEFAULT_PREFETCH_KB,
      'queued.min.messages': 100_000,
      'fetch.queue.backoff.ms': 10,
      // No Nagle delay on the broker connections (the Java client sets TCP_NODELAY too): with it, small fetch and
      // commit requests waited on delayed ACKs, up to ~40 ms each (docs/kafka.md "Latency").
      'socket.nagle.disable': true,
      // Messages wait in that cache as the native binding made them (per header an object and a Buffer): a cache of
      // 0.5 s kept up to a prefetch queue's worth of them more alive across young-generation GCs, which cost the
      // binary content mode ~30 % of its GC time (docs/kafka.md "Reading CloudEvents headers").
      'js.consumer.max.cache.size.per.worker.ms': 1,
      // A topic created after the consumer subscribed is only seen at the next metadata refresh: librdkafka's 5 minutes
      // left a consumer started before its topic (the natural deploy order) silent that long; 5 s costs one small
      // metadata request per client every 5 s.
      'topic.metadata.refresh.interval.ms': 5000,
      ...(options.instanceId === undefined ? {} : { 'group.instance.id': options.instanceId }),
      ...(options.sessionTimeoutMs === undefined
        ? {}
        : {
            'session.timeout.ms': options.sessionTimeoutMs,
            'heartbeat.interval.ms': Math.max(500, Math.floor(options.sessionTimeoutMs / 6)),
          }),
      ...silentConnectionBounds,
      rebalance_cb: (error: { code: number }, assignment: TopicPartition[], fns: RebalanceFns) =>
        this.#onRebalance(error, assignment, fns),
      ...rdkafka,
    });
  }

  /** The client's consumer, for the producer's transactional `sendOffsets` only. */
  get clientConsumer(): ClientConsumer {
    return this.#client;
  }

  async #onRebalance(error: { code: number }, assignment: TopicPartition[], fns: RebalanceFns): Promise<void> {
    const partitions = assignment.map(({ topic, partition }) => ({ topic, partition }));
    if (error.code === CODES.ERRORS.ERR__REVOKE_PARTITIONS) {
      await this.#settled(partitions);
      try {
        await this.#options.onRevoke?.(partitions);
      } finally {
        // Whatever the application's callback did (it may throw): the last positions go, and nothing of these
        // partitions is sent from now on (a position noted late would reach the broker in the next generation and
        // could move the new owner's offset back).
        await this.#flushCommits();
        for (const tp of partitions) this.#assigned.delete(partitionId(tp));
        this.#committer.discard(partitions);
        fns.unassign(assignment);
      }
    } else if (error.code === CODES.ERRORS.ERR__ASSIGN_PARTITIONS) {
      for (const tp of partitions) this.#assigned.add(partitionId(tp));
      fns.assign(assignment);
      this.#options.onAssign?.(partitions);
    }
  }

  /**
   * The final synchronous commit (revoke, close): what the database committed reaches the group before the partitions
   * go. A failure here only means a redelivery, which dedup absorbs.
   */
  async #flushCommits(): Promise<void> {
    await this.#committer.flush().catch(() => undefined);
  }

  /**
   * The broker's answer to each commit (librdkafka's offset commit callback, which the client turns on): `commitOffsets`
   * resolved when the commit was only queued. A refused position of a partition this member still holds is noted
   * again and goes out with the next commit (docs/kafka.md "Offset commits"). Once closing, refusals are left: the
   * member leaves the group, the next owner redelivers (dedup absorbs).
   */
  #listenToCommits(): void {
    if (this.#listening) return;
    this.#listening = true;
    // The client's node-rdkafka consumer (not in its typings); it exists once connected.
    const internal = (this.#client as unknown as { _getInternalClient(): InternalClient })._getInternalClient();
    const retried = new Set<number>(RETRIED.map((name) => CODES.ERRORS[name]));
    internal.on('offset.commit', (error, offsets) => {
      this.#unanswered.answered(Boolean(error?.code), offsets ?? []);
      if (error?.code === undefined || !retried.has(error.code) || this.#closing) return;
      this.#committer.refused(
        (offsets ?? [])
          .filter((tp) => this.#assigned.has(partitionId(tp)))
          .map(({ topic, partition, offset }) => ({ topic, partition, offset: String(offset) })),
      );
    });
  }

  /** Every batch in flight of `partitions` (default: all) has finished, whatever its outcome. */
  async #settled(partitions?: TopicPartition[]): Promise<void> {
    const keys = partitions?.map(partitionId) ?? [...this.#inFlight.keys()];
    await Promise.allSettled(keys.flatMap((key) => [...(this.#inFlight.get(key) ?? [])]));
  }

  async run(handler: BatchHandler): Promise<void> {
    if (this.#closing) throw new EffectivelyError(ErrorCodes.EFF_CLOSED, 'consumer is closed');
    this.#connecting ??= this.#client.connect();
    await this.#connecting;
    this.#listenToCommits();
    await this.#client.subscribe({ topics: this.#options.topics });
    await this.#client.run({
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.#options.partitionsInFlight ?? 1,
      eachBatch: async ({ batch, resolveOffset, pause }) => {
        if (this.#abort.signal.aborted) return;
        const records: IncomingRecord[] = recordsOf(batch);
        const work = handler(
          { topic: batch.topic, partition: batch.partition, records },
          { resolve: (offset) => resolveOffset(offset), pause: () => void pause(), signal: this.#abort.signal },
        );
        const key = partitionId(batch);
        const works = this.#inFlight.get(key) ?? new Set<Promise<void>>();
        this.#inFlight.set(key, works.add(work));
        try {
          await work;
        } finally {
          works.delete(work);
          if (works.size === 0) this.#inFlight.delete(key);
        }
      },
    });
  }

  /**
   * Notes the positions and returns at once with the broker's answer to come: commits are coalesced per partition (the
   * latest call wins) and sent one request at a time, at most one per `commitIntervalMs`, never on the batch's path.
   */
  commit(offsets: TopicPartitionOffset[]): Promise<void> {
    return this.#committer.commitHeld(offsets, (partition) => this.#assigned.has(partition));
  }

  pause(partitions: TopicPartition[]): void {
    this.#client.pause(partitions.map(({ topic, partition }) => ({ topic, partitions: [partition] })));
  }

  resume(partitions: TopicPartition[]): void {
    this.#client.resume(partitions.map(({ topic, partition }) => ({ topic, partitions: [partition] })));
  }

  seek(position: TopicPartitionOffset): void {
    this.#client.seek(position);
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#abort.abort(new EffectivelyError(ErrorCodes.EFF_CLOSED, 'consumer is closing'));
      await this.#settled();
      // librdkafka's close waits for this queued commit until the coordinator answers; with a frozen coordinator it
      // would wait for ever (probing it first with an offset fetch did not help: the probe's request is waited for
      // too). The wait is bounded (close.ts).
      await this.#flushCommits();
      if (this.#connecting) {
        await this.#connecting.catch(() => undefined);
        await disconnectWithin(this.#client.disconnect(), {
          timeoutMs: this.#tuning.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS,
          group: this.#options.group,
          logger: this.#tuning.logger ?? stderrLogger,
          uncommitted: () => this.#unanswered.list(),
        });
      }
    })();
    return this.#closing;
  }
}
