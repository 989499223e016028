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
    key: Buffer | null,
    timestamp: number,
    opaque: { resolve: (value: unknown) => void; reject: (error: unknown) => void },
    headers: Record<string, Buffer>[] | null,
  ): unknown;
}

export interface Message {
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer>;
}

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
  let headers = 0;
  for (const [name, value] of Object.entries(message.headers)) {
    const nameBytes = Buffer.byteLength(name, 'utf8');
    headers += varintSize(nameBytes) + nameBytes + varintSize(value.length) + value.length;
  }
  return 36 + (message.key?.length ?? 0) + (message.value?.length ?? 0) + headers;
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
const isFatal = (error: unknown) => (error as { fatal?: unknown } | null)?.fatal === true;

/**
 * The delivery reports of one send, kept per record (the client's opaque: it calls `resolve` or `reject` once per
 * record). Settles when every record produced was reported, or at once on a fatal error.
 */
class Deliveries {
  readonly outcomes: (SendOutcome | undefined)[];
  #waiting = 0;
  #fatal: unknown;
  #done: (() => void) | undefined;

  constructor(count: number) {
    this.outcomes = new Array(count);
  }

  /** The opaque of record `index`, one more report to wait for. */
  report(index: number): { resolve: () => void; reject: (error: unknown) => void } {
    this.#waiting++;
    return {
      resolve: () => this.#settle(index, acknowledged),
      reject: (error: unknown) => {
        if (isFatal(error)) this.#fatal ??= error;
        this.#settle(index, { acknowledged: false, error });
      },
    };
  }

  /** Record `index` was never produced (its `produce()` threw, or one before it did): nothing to wait for. */
  notProduced(index: number, error: unknown): void {
    this.outcomes[index] = { acknowledged: false, error };
  }

  #settle(index: number, outcome: SendOutcome): void {
    if (this.outcomes[index] !== undefined) return;
    this.outcomes[index] = outcome;
    this.#waiting--;
    if (this.#waiting === 0 || this.#fatal !== undefined) this.#done?.();
  }

  /** Resolves once every report came (or a fatal error did: the records not yet reported then count as failed). */
  async all(): Promise<SendOutcome[]> {
    if (this.#waiting > 0 && this.#fatal === undefined) {
      await new Promise<void>((resolve) => {
        this.#done = resolve;
      });
    }
    const fatal = this.#fatal;
    return Array.from(this.outcomes, (outcome) => outcome ?? { acknowledged: false, error: fatal });
  }
}

const acknowledged: SendOutcome = { acknowledged: true };

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
  messages.forEach((message, index) => {
    const size = recordWireSize(message);
    if (size > maxBytes) throw tooLarge(records[index]!, size, maxBytes);
  });
  const internal = (client as unknown as { _getInternalClient(): InternalProducer })._getInternalClient();
  const deliveries = new Deliveries(messages.length);
  let stopped: { error: unknown } | undefined;
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    if (stopped) {
      deliveries.notProduced(index, stopped.error);
      continue;
    }
    const headers = Object.entries(message.headers).map(([name, value]) => ({ [name]: value }));
    const opaque = deliveries.report(index);
    try {
      // Outside a promise executor, where a throw would only reject that promise and the loop would go on.
      internal.produce(records[index]!.topic, -1, message.value, message.key, 0, opaque, headers);
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
