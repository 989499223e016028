import type { Consumer as ClientConsumer } from '@platformatic/kafka';
import type { Logger } from '../../observability/logger.ts';
import type { BatchHandler, IncomingRecord, TopicPartition } from '../port.ts';
import { partitionId } from '../position.ts';
import { type FetchedBatch, recordsFrom } from './records.ts';

/** What this member knows of one partition it holds. Its one owner and one end is the assignment. */
interface PartitionState {
  tp: TopicPartition;
  /** The next offset to fetch. */
  position: bigint;
  /** Fetched, not yet handed to the handler. */
  buffered: IncomingRecord[];
  paused: boolean;
  running: Promise<void> | undefined;
  /** Bumped by seek, pause and a batch that ended short: a fetch asked before it is dropped, not buffered. */
  epoch: number;
  /** A handler that threw: the partition waits until then before it is fetched again. */
  notBefore: number;
  gone: boolean;
}

export interface FetcherSettings {
  maxBatchSize: number;
  partitionsInFlight: number;
  maxWaitMs: number;
  partitionMaxBytes: number;
  signal: AbortSignal;
  logger: Logger;
  /**
   * Where partitions whose position the broker no longer (or not yet) has start again (the offset reset: records
   * deleted by retention, a seek past the end). Given the positions asked for; returns the new ones.
   */
  outOfRange(positions: { tp: TopicPartition; position: bigint }[]): Promise<bigint[]>;
}

const RETRY_AFTER_THROW_MS = 1000;
const RETRY_AFTER_FETCH_ERROR_MS = 200;
const MAX_RETRY_AFTER_FETCH_ERROR_MS = 2000;
/** A fetch that keeps failing (a broker down) is logged once, then at most once per this interval. */
const FETCH_ERROR_LOG_INTERVAL_MS = 30_000;
const IDLE_WAIT_MS = 100;

/**
 * The consumer's own fetch loop on the client's lower-level `fetch` (the client's stream has no per-partition pause,
 * seek or batch): per partition a position, a buffer of what was read ahead (one fetch), a pause flag and at most one
 * batch in flight; up to `partitionsInFlight` partitions' batches at once. A batch that resolves short of its last
 * record, or whose partition is paused or sought meanwhile, has the rest fetched again from the first unresolved
 * offset: nothing read ahead is ever skipped.
 */
export class Fetcher {
  readonly #client: ClientConsumer;
  readonly #settings: FetcherSettings;
  readonly #partitions = new Map<string, PartitionState>();
  #handler: BatchHandler | undefined;
  #inFlight = 0;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;

  constructor(client: ClientConsumer, settings: FetcherSettings) {
    this.#client = client;
    this.#settings = settings;
  }

  start(handler: BatchHandler): void {
    this.#handler = handler;
    this.#loop ??= this.#run();
  }

  /** Partitions now held, each from its position. */
  add(positions: { tp: TopicPartition; position: bigint }[]): void {
    for (const { tp, position } of positions) {
      this.#partitions.set(partitionId(tp), {
        tp,
        position,
        buffered: [],
        paused: false,
        running: undefined,
        epoch: 0,
        notBefore: 0,
        gone: false,
      });
    }
    this.#poke();
  }

  /** Stops fetching and handing out `partitions`, waits for their batches in flight, then forgets them. */
  async remove(partitions: TopicPartition[]): Promise<void> {
    const states = partitions.flatMap((tp) => this.#partitions.get(partitionId(tp)) ?? []);
    for (const state of states) state.gone = true;
    await Promise.allSettled(states.map((state) => state.running));
    for (const state of states) {
      if (this.#partitions.get(partitionId(state.tp)) === state) this.#partitions.delete(partitionId(state.tp));
    }
  }

  held(): TopicPartition[] {
    return [...this.#partitions.values()].map((state) => state.tp);
  }

  pause(partitions: TopicPartition[]): void {
    for (const tp of partitions) {
      const state = this.#partitions.get(partitionId(tp));
      if (!state) continue;
      state.paused = true;
      this.#rewind(state);
    }
  }

  resume(partitions: TopicPartition[]): void {
    for (const tp of partitions) {
      const state = this.#partitions.get(partitionId(tp));
      if (state) state.paused = false;
    }
    this.#poke();
  }

  seek(tp: TopicPartition, offset: bigint): void {
    const state = this.#partitions.get(partitionId(tp));
    if (!state) return;
    state.buffered = [];
    state.position = offset;
    state.epoch++;
    state.notBefore = 0;
    this.#poke();
  }

  /** Stops the loop and waits for every batch in flight (the signal was aborted by the owner). */
  async stop(): Promise<void> {
    this.#poke();
    await this.#loop;
    await Promise.allSettled([...this.#partitions.values()].map((state) => state.running));
  }

  /** What was read ahead goes: it is fetched again from its first offset. */
  #rewind(state: PartitionState): void {
    const first = state.buffered[0];
    if (first) state.position = BigInt(first.offset);
    state.buffered = [];
    state.epoch++;
  }

  #poke(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  async #run(): Promise<void> {
    const { signal, logger } = this.#settings;
    let failures = 0;
    let loggedAt = Number.NEGATIVE_INFINITY;
    while (!signal.aborted) {
      this.#dispatch();
      const now = Date.now();
      const wanted = [...this.#partitions.values()].filter(
        (s) => !s.gone && !s.paused && s.buffered.length === 0 && s.notBefore <= now,
      );
      try {
        if (wanted.length > 0) await this.#fetch(wanted);
        else await this.#idle(IDLE_WAIT_MS);
        failures = 0;
      } catch (error) {
        if (signal.aborted) break;
        failures++;
        if (Date.now() - loggedAt > FETCH_ERROR_LOG_INTERVAL_MS) {
          loggedAt = Date.now();
          logger.warn('kafka (pure JavaScript): fetch failed; fetching again', { error: String(error), failures });
        }
        await this.#idle(Math.min(MAX_RETRY_AFTER_FETCH_ERROR_MS, RETRY_AFTER_FETCH_ERROR_MS * 2 ** (failures - 1)));
      }
    }
  }

  #idle(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.#poke(), ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  async #fetch(wanted: PartitionState[]): Promise<void> {
    const topics = [...new Set(wanted.map((s) => s.tp.topic))];
    const metadata = await this.#client.metadata({ topics });
    const byLeader = new Map<number, PartitionState[]>();
    for (const state of wanted) {
      const leader = metadata.topics.get(state.tp.topic)?.partitions[state.tp.partition]?.leader;
      if (leader === undefined || leader < 0) continue;
      byLeader.set(leader, [...(byLeader.get(leader) ?? []), state]);
    }
    await Promise.all([...byLeader].map(([leader, states]) => this.#fetchFrom(leader, states, metadata)));
  }

  async #fetchFrom(
    node: number,
    states: PartitionState[],
    metadata: Awaited<ReturnType<ClientConsumer['metadata']>>,
  ): Promise<void> {
    const asked = new Map<string, { state: PartitionState; epoch: number; from: bigint }>();
    const byTopic = new Map<string, { topicId: string; partitions: unknown[] }>();
    for (const state of states) {
      const topicId = metadata.topics.get(state.tp.topic)!.id;
      asked.set(`${topicId}\u0000${state.tp.partition}`, { state, epoch: state.epoch, from: state.position });
      const entry = byTopic.get(topicId) ?? { topicId, partitions: [] };
      byTopic.set(topicId, entry);
      entry.partitions.push({
        partition: state.tp.partition,
        fetchOffset: state.position,
        partitionMaxBytes: this.#settings.partitionMaxBytes,
        currentLeaderEpoch: -1,
        lastFetchedEpoch: -1,
      });
    }
    let response: Awaited<ReturnType<ClientConsumer['fetch']>>;
    try {
      response = await this.#client.fetch({
        node,
        topics: [...byTopic.values()] as never,
        maxWaitTime: this.#settings.maxWaitMs,
      });
    } catch (error) {
      if (!(error as { findBy?(key: string, value: string): unknown }).findBy?.('apiId', 'OFFSET_OUT_OF_RANGE')) {
        throw error;
      }
      await this.#reset([...asked.values()]);
      return;
    }
    for (const topic of response.responses) {
      for (const part of topic.partitions) {
        const entry = asked.get(`${topic.topicId}\u0000${part.partitionIndex}`);
        if (!entry || !part.records) continue;
        const { state, epoch, from } = entry;
        // sought, paused or rewound since it was asked, or no longer held: what came is not what is wanted now
        if (state.gone || state.epoch !== epoch) continue;
        const { records, next } = recordsFrom(state.tp.topic, state.tp.partition, part.records as FetchedBatch[], from);
        state.position = next;
        state.buffered = records;
      }
    }
    this.#dispatch();
  }

  /** The offset reset of the partitions of a fetch the broker refused as out of range (unchanged: the others). */
  async #reset(asked: { state: PartitionState; epoch: number; from: bigint }[]): Promise<void> {
    const positions = await this.#settings.outOfRange(
      asked.map(({ state, from }) => ({ tp: state.tp, position: from })),
    );
    asked.forEach(({ state, epoch, from }, n) => {
      const position = positions[n]!;
      if (state.gone || state.epoch !== epoch || position === from) return;
      this.#settings.logger.warn('kafka (pure JavaScript): offset out of range; the partition starts again', {
        topic: state.tp.topic,
        partition: state.tp.partition,
        from: from.toString(),
        to: position.toString(),
      });
      state.position = position;
      state.buffered = [];
      state.epoch++;
    });
  }

  /** Hands buffered records to the handler: one batch per partition at a time, `partitionsInFlight` at once. */
  #dispatch(): void {
    const { partitionsInFlight, maxBatchSize, signal } = this.#settings;
    if (!this.#handler || signal.aborted) return;
    for (const [key, state] of [...this.#partitions]) {
      if (this.#inFlight >= partitionsInFlight) return;
      if (state.running || state.paused || state.gone || state.buffered.length === 0) continue;
      const records = state.buffered.splice(0, maxBatchSize);
      // to the end of the map: the next dispatch starts with the partitions that waited
      this.#partitions.delete(key);
      this.#partitions.set(key, state);
      this.#inFlight++;
      state.running = this.#runBatch(this.#handler, state, records);
    }
  }

  async #runBatch(handler: BatchHandler, state: PartitionState, records: IncomingRecord[]): Promise<void> {
    const epoch = state.epoch;
    let resolved: string | undefined;
    const last = records.at(-1)!.offset;
    try {
      await handler(
        { topic: state.tp.topic, partition: state.tp.partition, records },
        {
          resolve: (offset) => {
            resolved = offset;
          },
          pause: () => {
            state.paused = true;
          },
          signal: this.#settings.signal,
        },
      );
    } catch (error) {
      state.notBefore = Date.now() + RETRY_AFTER_THROW_MS;
      this.#settings.logger.warn('kafka (pure JavaScript): a batch handler threw; its records are fetched again', {
        topic: state.tp.topic,
        partition: state.tp.partition,
        error: String(error),
      });
    } finally {
      this.#inFlight--;
      state.running = undefined;
      // Not sought meanwhile: the unresolved rest (this batch's and what was read ahead) is fetched again
      if (state.epoch === epoch && (resolved !== last || state.paused)) {
        if (resolved !== last) {
          state.buffered = [];
          state.position = resolved === undefined ? BigInt(records[0]!.offset) : BigInt(resolved) + 1n;
          state.epoch++;
        } else this.#rewind(state);
      }
      this.#dispatch();
      this.#poke();
    }
  }
}
