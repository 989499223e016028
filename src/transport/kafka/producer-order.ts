import { EffectivelyError, ErrorCodes } from '../../errors.ts';
import type { OutgoingRecord, SendOutcome } from '../port.ts';
import type { Kafka } from './client.ts';

type ClientProducer = ReturnType<Kafka['producer']>;

/** The node-rdkafka producer under the KafkaJS-style client (its delivery reports settle `{ resolve, reject }`). */
interface InternalProducer {
  produce(
    topic: string,
    partition: number,
    value: Buffer | null,
    key: string | Buffer | null,
    timestamp: number,
    opaque: { resolve: (value: unknown) => void; reject: (error: unknown) => void },
    headers: Record<string, string | Buffer>[] | null,
  ): unknown;
  on(event: 'event.error', listener: (error: unknown) => void): unknown;
}

/** A record as the client's `produce()` takes it: strings (none holding NUL) go as they are, copied as UTF-8. */
export interface Message {
  key: string | Buffer | null;
  value: Buffer | null;
  headers: Record<string, string | Buffer>;
}

const byteLength = (value: string | Buffer) =>
  typeof value === 'string' ? Buffer.byteLength(value, 'utf8') : value.length;

/** librdkafka's default `message.max.bytes` raised to room for large records (the broker script allows 16 MB). */
export const defaultMessageMaxBytes = 16 * 1024 * 1024;

const varintSize = (n: number) => {
  let size = 1;
  for (let rest = n >>> 7; rest > 0; rest >>>= 7) size++;
  return size;
};

/**
 * The size librdkafka checks against the producer's `message.max.bytes` inside `produce()` (rd_kafka_msg_new0): the
 * v2 record's largest overhead (36 bytes of varints and attributes), key, value, and each header as
 * varint(name) + name + varint(value) + value.
 */
export function recordWireSize(message: Message): number {
  return sizedHeaders(message).size;
}

/** The record's wire size and its headers as the client's `produce()` takes them (one `{ name: value }` each). */
function sizedHeaders(message: Message): { size: number; headers: Record<string, string | Buffer>[] } {
  let size = 36 + (message.key === null ? 0 : byteLength(message.key)) + (message.value?.length ?? 0);
  const headers: Record<string, string | Buffer>[] = [];
  for (const name in message.headers) {
    const value = message.headers[name]!;
    const nameBytes = Buffer.byteLength(name, 'utf8');
    const valueBytes = byteLength(value);
    size += varintSize(nameBytes) + nameBytes + varintSize(valueBytes) + valueBytes;
    headers.push({ [name]: value });
  }
  return { size, headers };
}

/** A refusal shaped as librdkafka's own (its numeric `code`), so the relay sets the record aside as it would. */
function tooLarge(record: OutgoingRecord, size: number, limit: number): EffectivelyError {
  const cause = Object.assign(new Error(`Broker: Message size too large (${size} bytes over ${limit})`), {
    code: 10,
    type: 'ERR_MSG_SIZE_TOO_LARGE',
  });
  return new EffectivelyError(
    ErrorCodes.EFF_TRANSPORT,
    `kafka send refused: a record of ${size} bytes is over the producer's message.max.bytes (${limit}); nothing of the send was produced`,
    { retryable: true, cause, details: { topic: record.topic, size, limit, delivered: 0, acknowledged: 0 } },
  );
}

/** A failure after which the producer reports nothing more until `message.timeout.ms` (librdkafka's fatal state). */
const isFatal = (error: unknown) => {
  const fields = error as { fatal?: unknown; isFatal?: unknown; code?: unknown } | null;
  return fields?.fatal === true || fields?.isFatal === true || fields?.code === -150;
};

/** After a failed report, how long a silence ends the wait for the others (they then count as failed: sent again). */
const silenceAfterFailureMs = 5000;

/** What became of a record not reported in time: unknown (a transient failure, so it is sent again). */
const silence = () =>
  new EffectivelyError(
    ErrorCodes.EFF_TIMEOUT,
    `no delivery report within ${silenceAfterFailureMs} ms after a record of the send failed`,
    { retryable: true },
  );

/**
 * The delivery reports of one send, kept per record (the client's opaque: it calls `resolve` or `reject` once per
 * record). Settles when every record produced was reported; or, once one record failed, at a fatal error, at any
 * error the client raises (with `enable.gapless.guarantee` a refused batch stops the producer with a client error,
 * code -1, and the records behind it are reported only at `message.timeout.ms`), or after 5 s without a report. The
 * records not reported then count as failed: a caller sends them again (a copy at worst, never a loss).
 */
class Deliveries {
  readonly outcomes: (SendOutcome | undefined)[];
  #waiting = 0;
  /** The first failed report's error (undefined: none yet). */
  #failure: { error: unknown } | undefined;
  /** The first error the client raised during the send (it may come before the failed report). */
  #clientError: { error: unknown } | undefined;
  #gaveUp: unknown;
  #done: (() => void) | undefined;
  #silence: NodeJS.Timeout | undefined;

  constructor(count: number) {
    this.outcomes = new Array(count);
  }

  /** The opaque of record `index`, one more report to wait for. */
  report(index: number): Report {
    this.#waiting++;
    return new Report(this, index);
  }

  acknowledge(index: number): void {
    this.#settle(index, acknowledged);
  }

  fail(index: number, error: unknown): void {
    this.#failure ??= { error };
    this.#settle(index, { acknowledged: false, error });
    if (isFatal(error)) this.#giveUp(error);
    else if (this.#clientError !== undefined) this.#giveUp(this.#clientError.error);
  }

  /** Record `index` was never produced (its `produce()` threw, or one before it did): nothing to wait for. */
  notProduced(index: number, error: unknown): void {
    this.outcomes[index] = { acknowledged: false, error };
  }

  /** An error the client raised (not a record's report): the end of the wait once a record failed, or when fatal. */
  clientError(error: unknown): void {
    this.#clientError ??= { error };
    if (this.#failure !== undefined || isFatal(error)) this.#giveUp(error);
  }

  #watchSilence(): void {
    clearTimeout(this.#silence);
    if (this.#waiting > 0) this.#silence = setTimeout(() => this.#giveUp(silence()), silenceAfterFailureMs);
  }

  #giveUp(error: unknown): void {
    if (this.#waiting === 0 || this.#gaveUp !== undefined) return;
    this.#gaveUp = error;
    this.#end();
  }

  #settle(index: number, outcome: SendOutcome): void {
    if (this.outcomes[index] !== undefined || this.#gaveUp !== undefined) return;
    this.outcomes[index] = outcome;
    this.#waiting--;
    if (this.#waiting === 0) this.#end();
    else if (this.#failure !== undefined) this.#watchSilence();
  }

  #end(): void {
    clearTimeout(this.#silence);
    this.#done?.();
  }

  /** Resolves once the wait ends; the records not reported by then count as failed. */
  async all(): Promise<SendOutcome[]> {
    if (this.#waiting > 0 && this.#gaveUp === undefined) {
      await new Promise<void>((resolve) => {
        this.#done = resolve;
      });
    }
    const error = this.#gaveUp;
    return Array.from(this.outcomes, (outcome) => outcome ?? { acknowledged: false, error });
  }
}

const acknowledged: SendOutcome = { acknowledged: true };

/** The opaque of one record: the client's delivery report calls `resolve` or `reject` on it (no Promise per record). */
class Report {
  constructor(
    readonly deliveries: Deliveries,
    readonly index: number,
  ) {}

  resolve(): void {
    this.deliveries.acknowledge(this.index);
  }

  reject(error: unknown): void {
    this.deliveries.fail(this.index, error);
  }
}

/**
 * Produces records in the order given and waits for every delivery report. Two things the client's `sendBatch`
 * does not do, both for one key's order:
 *  - a record over the producer's `message.max.bytes` is refused before anything of the send is produced (librdkafka
 *    refuses it synchronously inside `produce()`, and the client went on producing the records behind it: a later
 *    record of its key was written while it was set aside);
 *  - once one `produce()` throws (the local queue full, a record refused), nothing behind it is produced.
 * A failed send says what became of each record (`details.outcomes`, in the order given: acknowledged, or the error of
 * its own delivery report), so the caller keeps what the broker took and sends again only the rest: the broker refuses
 * a whole per-partition batch (a batch over the topic's `max.message.bytes`), the other partitions' records pass.
 * `details.delivered`: how many records at the head were acknowledged; `details.acknowledged`: how many in all.
 */
export async function produceInOrder(
  client: ClientProducer,
  records: readonly OutgoingRecord[],
  messages: readonly Message[],
  maxBytes: number,
): Promise<void> {
  const headers = messages.map((message, index) => {
    const sized = sizedHeaders(message);
    if (sized.size > maxBytes) throw tooLarge(records[index]!, sized.size, maxBytes);
    return sized.headers;
  });
  const internal = (client as unknown as { _getInternalClient(): InternalProducer })._getInternalClient();
  const deliveries = new Deliveries(messages.length);
  const sends = sendsOf(internal);
  sends.add(deliveries);
  try {
    return await produceAll(internal, records, messages, headers, deliveries);
  } finally {
    sends.delete(deliveries);
  }
}

/** Per client, the sends waiting for their delivery reports. */
const waiting = new WeakMap<InternalProducer, Set<Deliveries>>();

/**
 * The sends in flight on `internal`, told of a client error by one `event.error` listener per client (a listener per
 * send made Node print MaxListenersExceededWarning past 10 sends at once).
 */
function sendsOf(internal: InternalProducer): Set<Deliveries> {
  let sends = waiting.get(internal);
  if (!sends) {
    const created = new Set<Deliveries>();
    internal.on('event.error', (error) => {
      for (const deliveries of created) deliveries.clientError(error);
    });
    waiting.set(internal, created);
    sends = created;
  }
  return sends;
}

async function produceAll(
  internal: InternalProducer,
  records: readonly OutgoingRecord[],
  messages: readonly Message[],
  headers: readonly Record<string, string | Buffer>[][],
  deliveries: Deliveries,
): Promise<void> {
  let stopped: { error: unknown } | undefined;
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    if (stopped) {
      deliveries.notProduced(index, stopped.error);
      continue;
    }
    const opaque = deliveries.report(index);
    try {
      // Outside a promise executor, where a throw would only reject that promise and the loop would go on.
      internal.produce(records[index]!.topic, -1, message.value, message.key, 0, opaque, headers[index]!);
    } catch (error) {
      stopped = { error };
      // No report will come for it.
      opaque.reject(error);
    }
  }
  const outcomes = await deliveries.all();
  const failedAt = outcomes.findIndex((outcome) => !outcome.acknowledged);
  if (failedAt === -1) return;
  const failure = (outcomes[failedAt] as { error: unknown }).error;
  const count = outcomes.reduce((sum, outcome) => sum + (outcome.acknowledged ? 1 : 0), 0);
  throw new EffectivelyError(
    ErrorCodes.EFF_TRANSPORT,
    `kafka send failed (${count} of ${outcomes.length} records acknowledged): ${(failure as Error)?.message}`,
    { retryable: true, cause: failure, details: { delivered: failedAt, acknowledged: count, outcomes } },
  );
}
