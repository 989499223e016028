import { EffectivelyError, ErrorCodes } from '../../errors.ts';
import type { OutgoingRecord } from '../port.ts';
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
    { retryable: true, cause, details: { topic: record.topic, size, limit, delivered: 0 } },
  );
}

/**
 * Produces records in the order given and waits for every delivery report. Two things the client's `sendBatch`
 * does not do, both for one key's order:
 *  - a record over the producer's `message.max.bytes` is refused before anything of the send is produced (librdkafka
 *    refuses it synchronously inside `produce()`, and the client went on producing the records behind it: a later
 *    record of its key was written while it was set aside);
 *  - once one `produce()` throws (the local queue full, a record refused), nothing behind it is produced. The records
 *    before it are awaited; when all of them were acknowledged the error says how many (`details.delivered`), so the
 *    caller takes them as published and goes on with the rest, rather than sending them again.
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
  const deliveries: Promise<unknown>[] = [];
  let stopped: unknown;
  for (const [index, message] of messages.entries()) {
    const headers = Object.entries(message.headers).map(([name, value]) => ({ [name]: value }));
    let settle!: { resolve: (value: unknown) => void; reject: (error: unknown) => void };
    const promise = new Promise((resolve, reject) => {
      settle = { resolve, reject };
    });
    try {
      // Outside a promise executor, where a throw would only reject that promise and the loop would go on.
      internal.produce(records[index]!.topic, -1, message.value, message.key, 0, settle, headers);
    } catch (error) {
      stopped = error;
      break;
    }
    deliveries.push(promise);
  }
  // The first failed delivery ends the wait (after a fatal error the records behind it may only be reported once
  // message.timeout.ms passes); the send is then retried whole. When every record produced was acknowledged, they
  // are the head of the send the caller keeps.
  let failure = stopped;
  let delivered = deliveries.length;
  try {
    await Promise.all(deliveries);
  } catch (error) {
    failure = error;
    delivered = 0;
  }
  if (failure === undefined) return;
  throw new EffectivelyError(ErrorCodes.EFF_TRANSPORT, `kafka send failed: ${(failure as Error).message}`, {
    retryable: true,
    cause: failure,
    details: { delivered },
  });
}
