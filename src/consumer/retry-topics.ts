import { EffectivelyError, ErrorCodes } from '../errors.ts';
import { keyToSend } from '../transport/key.ts';
import type { IncomingRecord, OutgoingRecord } from '../transport/port.ts';

/**
 * Non-blocking retries: a record that fails is forwarded to `<topic>-retry-1`, then `-retry-2`, … each with its own
 * delay, then to `<topic>-dlt`, and its offset moves on at once. The forwarded record keeps its key, value and headers
 * (so its event id) and gains the `effectively-*` headers below. Retry topics are shared by every group reading the
 * topic: each group takes only the records it forwarded itself (`effectively-group`).
 */
export const RetryHeaders = {
  attempt: 'effectively-attempt',
  due: 'effectively-due',
  group: 'effectively-group',
  originalTopic: 'effectively-original-topic',
  originalPartition: 'effectively-original-partition',
  originalOffset: 'effectively-original-offset',
  originalTimestamp: 'effectively-original-timestamp',
  firstFailedAt: 'effectively-first-failed-at',
  errorClass: 'effectively-error-class',
  errorCode: 'effectively-error-code',
  errorMessage: 'effectively-error-message',
  errorStack: 'effectively-error-stack',
  /** What a dead letter too large for its topic left out of the input (e.g. `value (2097152 bytes)`). */
  dropped: 'effectively-dropped',
} as const;

const prefix = 'effectively-';
const maxStack = 2000;
const maxMessage = 2000;

export interface RetryTopicsOptions {
  /** Delay of each retry topic, in order: `<topic>-retry-1` waits the first (default 1 s, 4 s, 16 s). */
  delaysMs?: number[];
  /** Create the retry topics and `<topic>-dlt` on start, with the partitions of the main topic (default true). */
  create?: boolean;
}

/** Where a topic sits in the chain: the main topic (stage 0), a retry topic (1..n), or the dead-letter topic. */
export interface Stage {
  main: string;
  stage: number | 'dlt';
}

export function retryTopicName(topic: string, stage: number): string {
  return `${topic}-retry-${stage}`;
}

export function deadLetterTopicName(topic: string): string {
  return `${topic}-dlt`;
}

export class RetryTopics {
  readonly delaysMs: number[];
  readonly #stages = new Map<string, Stage>();

  constructor(topics: string[], options: RetryTopicsOptions) {
    this.delaysMs = options.delaysMs ?? [1000, 4000, 16_000];
    for (const main of topics) {
      this.#stages.set(main, { main, stage: 0 });
      for (let stage = 1; stage <= this.delaysMs.length; stage++)
        this.#stages.set(retryTopicName(main, stage), { main, stage });
      this.#stages.set(deadLetterTopicName(main), { main, stage: 'dlt' });
    }
  }

  /** Every topic a consumer of `topics` subscribes to: the main ones, their retry topics and dead-letter topics. */
  subscriptions(): string[] {
    return [...this.#stages.keys()];
  }

  stageOf(topic: string): Stage {
    return this.#stages.get(topic) ?? { main: topic, stage: 0 };
  }

  /**
   * How long a record of `topic` due at `due` must still wait: `skewMs` > 0 when the due time is further away than the
   * topic's own delay, which a forward made now cannot set. Due times come from the forwarding member's clock: a clock
   * ahead (or a header written by hand) would hold the partition that long, and past 2^31-1 ms Node's timer fires at
   * once, in a pause/resume loop. Such a record is due now (`waitMs` 0); the caller logs the skew.
   */
  waitOf(topic: string, due: number, now = Date.now()): { waitMs: number; skewMs: number } {
    const { stage } = this.stageOf(topic);
    const delay = typeof stage === 'number' && stage > 0 ? (this.delaysMs[stage - 1] ?? 0) : 0;
    const wait = due - now;
    if (wait <= 0) return { waitMs: 0, skewMs: 0 };
    return wait > delay ? { waitMs: 0, skewMs: wait - delay } : { waitMs: wait, skewMs: 0 };
  }

  /** The record forwarded after failed attempt number `attempts`: the next retry topic, or the dead-letter topic. */
  forward(
    record: IncomingRecord,
    error: unknown,
    attempts: number,
    group: string,
    permanent: boolean,
    now = Date.now(),
  ): OutgoingRecord {
    const stage = this.stageOf(record.topic);
    const main = stage.main;
    const next = permanent || attempts > this.delaysMs.length ? null : attempts;
    // The forwarding headers are trusted only on a record of this group's own chain: a record of the main topic that
    // carries them (a handler re-emitting `event.headers`, a hostile producer) must not choose where a redrive goes.
    const forwarded =
      stage.stage !== 0 && groupOf(record) === group && header(record, RetryHeaders.originalTopic) === main;
    const headers: Record<string, string | Buffer> = forwarded ? { ...record.headers } : withoutOurHeaders(record);
    if (!forwarded) {
      headers[RetryHeaders.originalTopic] = record.topic;
      headers[RetryHeaders.originalPartition] = String(record.partition);
      headers[RetryHeaders.originalOffset] = record.offset;
      headers[RetryHeaders.originalTimestamp] = String(record.timestamp);
      headers[RetryHeaders.firstFailedAt] = String(now);
    }
    const failure = error instanceof Error ? error : new Error(String(error));
    headers[RetryHeaders.attempt] = String(attempts);
    headers[RetryHeaders.due] = String(next === null ? now : now + this.delaysMs[next - 1]!);
    headers[RetryHeaders.group] = group;
    headers[RetryHeaders.errorClass] = failure.name;
    headers[RetryHeaders.errorCode] = error instanceof EffectivelyError ? error.code : ErrorCodes.EFF_HANDLER_FAILED;
    headers[RetryHeaders.errorMessage] = failure.message.slice(0, maxMessage);
    headers[RetryHeaders.errorStack] = (failure.stack ?? '').slice(0, maxStack);
    return {
      topic: next === null ? deadLetterTopicName(main) : retryTopicName(main, next),
      key: keyToSend(record.key),
      value: record.value,
      headers,
    };
  }
}

function header(record: IncomingRecord, name: string): string | undefined {
  return record.headers[name]?.toString('utf8');
}

function withoutOurHeaders(record: IncomingRecord): Record<string, Buffer> {
  const headers: Record<string, Buffer> = {};
  for (const [name, value] of Object.entries(record.headers)) if (!name.startsWith(prefix)) headers[name] = value;
  return headers;
}

/** Whether `topic` is a retry topic or the dead-letter topic of `main`, by the names this library gives them. */
function inChainOf(topic: string, main: string): boolean {
  if (topic === deadLetterTopicName(main)) return true;
  const retryPrefix = `${main}-retry-`;
  return topic.startsWith(retryPrefix) && /^[1-9]\d{0,8}$/.test(topic.slice(retryPrefix.length));
}

const maxPartition = 2 ** 31 - 1;
const maxOffset = 2n ** 63n - 1n;

/** The original coordinates the forwarding headers give, or the name of the first header that does not parse. */
function coordinatesOf(record: IncomingRecord): { partition: number; offset: string; timestamp: number } | string {
  const partition = header(record, RetryHeaders.originalPartition) ?? '';
  if (!/^\d{1,10}$/.test(partition) || Number(partition) > maxPartition) return RetryHeaders.originalPartition;
  const offset = header(record, RetryHeaders.originalOffset) ?? '';
  if (!/^\d{1,19}$/.test(offset) || BigInt(offset) > maxOffset) return RetryHeaders.originalOffset;
  const timestamp = Number(header(record, RetryHeaders.originalTimestamp));
  return { partition: Number(partition), offset, timestamp: Number.isFinite(timestamp) ? timestamp : record.timestamp };
}

/** Attempts already made on a forwarded record (0 for a record of the main topic). */
export function attemptsOf(record: IncomingRecord): number {
  return Number(header(record, RetryHeaders.attempt) ?? 0) || 0;
}

/** When a forwarded record may be tried again (ms since epoch; 0 when it carries no due time). */
export function dueOf(record: IncomingRecord): number {
  return Number(header(record, RetryHeaders.due) ?? 0) || 0;
}

export function groupOf(record: IncomingRecord): string | undefined {
  return header(record, RetryHeaders.group);
}

/**
 * The record as its producer wrote it, at its original coordinates, without the forwarding headers: what the
 * dead-letter store keeps and a redrive republishes. The forwarding headers count only on a record of the chain they
 * name (`<topic>-retry-N` or `<topic>-dlt` for original topic `<topic>`); anything else is kept at its own
 * coordinates. Coordinates that do not parse make it a dead letter `EFF_FORWARD_HEADERS_INVALID` at its own
 * coordinates (a NaN partition failed the insert, and settling retried it for ever).
 */
export function originalOf(record: IncomingRecord): {
  record: IncomingRecord;
  firstFailedAt: Date;
  code: string;
  reason: string;
} {
  const headers = withoutOurHeaders(record);
  const firstFailedAt = Number(header(record, RetryHeaders.firstFailedAt));
  const reason = `${header(record, RetryHeaders.errorClass) ?? 'Error'}: ${header(record, RetryHeaders.errorMessage) ?? 'unknown'}`;
  const common = {
    firstFailedAt: Number.isFinite(firstFailedAt) ? new Date(firstFailedAt) : new Date(),
    code: header(record, RetryHeaders.errorCode) ?? ErrorCodes.EFF_HANDLER_FAILED,
    reason,
  };
  const main = header(record, RetryHeaders.originalTopic);
  if (main === undefined || !inChainOf(record.topic, main)) return { ...common, record: { ...record, headers } };
  const coordinates = coordinatesOf(record);
  if (typeof coordinates === 'string') {
    const value = JSON.stringify((header(record, coordinates) ?? '').slice(0, 100));
    return {
      ...common,
      record: { ...record, headers },
      code: ErrorCodes.EFF_FORWARD_HEADERS_INVALID,
      reason: `forwarding headers invalid (${coordinates}: ${value}), kept where it was read; ${reason}`,
    };
  }
  return { ...common, record: { ...record, topic: main, ...coordinates, headers } };
}
