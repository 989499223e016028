import { EffectivelyError, ErrorCodes } from '../../errors.ts';
import type { Consumer, OutgoingRecord, Producer, TopicPartitionOffset } from '../port.ts';
import type { Kafka } from './client.ts';
import { KafkaConsumer } from './consumer.ts';
import { defaultMessageMaxBytes, produceInOrder } from './producer-order.ts';
import { txnErrorKind } from './txn-errors.ts';

type ClientProducer = ReturnType<Kafka['producer']>;

/**
 * The client hands strings to librdkafka as C strings: a NUL in a string key or header value silently cut the rest
 * off (key `a\0b` arrived as `a`, another key on another partition). A string holding NUL goes as a Buffer, whole;
 * any other string goes as it is (the client copies its UTF-8 bytes: no Buffer made per key and header value, the
 * relay's main cost after the client's own produce()). A header NAME can only be a string: one holding NUL is refused
 * rather than sent under a shorter name.
 */
function bytesOf(value: string | Buffer): string | Buffer {
  return typeof value === 'string' && value.includes('\u0000') ? Buffer.from(value, 'utf8') : value;
}

export function toMessage(record: OutgoingRecord) {
  // No prototype: a header named `__proto__` is a header like any other (in `{}` it set the prototype instead, and a
  // string value was dropped without a word).
  const headers: Record<string, string | Buffer> = Object.create(null);
  // Object.keys, not Object.entries: no [name, value] array made per header of every record.
  for (const name of Object.keys(record.headers)) {
    const value = record.headers[name]!;
    if (name.includes('\u0000')) {
      throw new EffectivelyError(
        ErrorCodes.EFF_INVALID_EVENT,
        'a header name holds a NUL byte: Kafka cannot carry it',
        {
          details: { topic: record.topic, header: name.replaceAll('\u0000', '\\0') },
        },
      );
    }
    headers[name] = bytesOf(value);
  }
  return { key: record.key === null ? null : bytesOf(record.key), value: record.value, headers };
}

function groupByTopic(records: readonly OutgoingRecord[]) {
  const byTopic = new Map<string, ReturnType<typeof toMessage>[]>();
  for (const record of records) {
    const messages = byTopic.get(record.topic) ?? [];
    if (messages.length === 0) byTopic.set(record.topic, messages);
    messages.push(toMessage(record));
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
}

/**
 * A connection gone silent (no reset: a half-open socket behind a NAT, a lost acknowledgement) is noticed by the
 * request's own timeout: 10 s instead of librdkafka's 60 s (then the connection is closed and the request sent again
 * on a new one; idempotent, so never twice), and a connect that hangs gives up after 10 s instead of 30 s. TCP
 * keepalive on, for idle connections.
 */
export const silentConnectionBounds = {
  'socket.timeout.ms': 10_000,
  'socket.connection.setup.timeout.ms': 10_000,
  'socket.keepalive.enable': true,
} as const;

/** Idempotent producer: acks=all and enable.idempotence, so a retried send never duplicates or reorders on the broker. */
export class KafkaProducer implements Producer {
  readonly #make: () => ClientProducer;
  #client: ClientProducer;
  #connecting: Promise<void> | undefined;
  #closing: Promise<void> | undefined;

  readonly #transactional: boolean;
  readonly #maxBytes: number;

  constructor(kafka: Kafka, rdkafka: Record<string, string | number | boolean>, transactionalId?: string) {
    this.#transactional = transactionalId !== undefined;
    this.#maxBytes = Number(rdkafka['message.max.bytes'] ?? defaultMessageMaxBytes);
    this.#make = () =>
      kafka.producer({
        kafkaJS: {
          idempotent: true,
          acks: -1,
          ...(transactionalId === undefined ? {} : { transactionalId, maxInFlightRequests: 1 }),
        },
        // The relay hands over whole batches at once; a short linger keeps single events fast (latency) without
        // splitting batches.
        'linger.ms': 1,
        // No Nagle delay: a small produce request would otherwise wait on the broker's delayed ACK (docs/kafka.md).
        'socket.nagle.disable': true,
        // Room for large records (the broker script allows 16 MB); a record over the limit fails its send, loudly.
        'message.max.bytes': defaultMessageMaxBytes,
        // The partition count a key is hashed by comes from the client's metadata, refreshed every 5 minutes by
        // default: a topic deleted and created again with another count meanwhile put one key on two partitions for
        // that long (issue 38). 5 s bounds it (one small metadata request per producer every 5 s, as the consumers).
        'topic.metadata.refresh.interval.ms': 5000,
        ...silentConnectionBounds,
        ...rdkafka,
      });
    this.#client = this.#make();
  }

  /**
   * Connects once; a connect that failed (the broker down) is not kept: the client, which connects only once, is
   * replaced and the next call tries again.
   */
  connect(): Promise<void> {
    if (this.#connecting) return this.#connecting;
    const client = this.#client;
    const connecting = client.connect().catch((error: unknown) => {
      if (this.#client === client && this.#connecting === connecting && !this.#closing) {
        this.#client = this.#make();
        this.#connecting = undefined;
      }
      throw error;
    });
    this.#connecting = connecting;
    return connecting;
  }

  async send(records: readonly OutgoingRecord[]): Promise<void> {
    if (records.length === 0) return;
    if (this.#closing) throw new EffectivelyError(ErrorCodes.EFF_CLOSED, 'producer is closed');
    // A record Kafka cannot carry is refused before anything is sent (EFF_INVALID_EVENT, not retryable).
    const messages = records.map(toMessage);
    await this.connect();
    // In the order given, nothing produced behind a record the client refused (see produceInOrder).
    await produceInOrder(this.#client, records, messages, this.#maxBytes);
  }

  async sendInTransaction(
    records: readonly OutgoingRecord[],
    offsets: TopicPartitionOffset[],
    consumer: Consumer,
  ): Promise<void> {
    if (!this.#transactional) {
      throw new EffectivelyError(
        ErrorCodes.EFF_INVALID_OPTIONS,
        'sendInTransaction needs a producer with a transactionalId',
      );
    }
    if (!(consumer instanceof KafkaConsumer)) {
      throw new EffectivelyError(
        ErrorCodes.EFF_INVALID_OPTIONS,
        'sendInTransaction needs a consumer of the Kafka transport',
      );
    }
    await this.connect();
    let transaction: Awaited<ReturnType<ClientProducer['transaction']>> | undefined;
    try {
      transaction = await this.#client.transaction();
      if (records.length > 0) await transaction.sendBatch({ topicMessages: groupByTopic(records) });
      const byTopic = new Map<string, { partition: number; offset: string }[]>();
      for (const { topic, partition, offset } of offsets) {
        byTopic.set(topic, [...(byTopic.get(topic) ?? []), { partition, offset }]);
      }
      await transaction.sendOffsets({
        consumer: consumer.clientConsumer,
        topics: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })),
      });
      await transaction.commit();
    } catch (error) {
      // A fatal error (fenced, an invalid state) leaves the producer unusable, and so does an abort that fails: every
      // later transaction would fail the same way. The client is replaced by a new one with the same transactional id
      // (its initialisation ends whatever the old one left open), so the caller's retry can succeed.
      let replace = txnErrorKind(error) === 'fatal' || transaction === undefined;
      if (!replace) {
        await transaction!.abort().catch(() => {
          replace = true;
        });
      }
      if (replace) await this.#replaceClient();
      const state = replace
        ? ' (the producer could not go on: replaced by a new one with the same transactional id)'
        : '';
      throw new EffectivelyError(
        ErrorCodes.EFF_TRANSPORT,
        `kafka transaction aborted${state}: ${(error as Error).message}`,
        { retryable: true, cause: error, details: { replaced: replace } },
      );
    }
  }

  /** Drops a client that cannot go on and makes a new one (connected on the next call). */
  async #replaceClient(): Promise<void> {
    const old = this.#client;
    const connecting = this.#connecting;
    this.#client = this.#make();
    this.#connecting = undefined;
    if (connecting) {
      await connecting.catch(() => undefined);
      await old.disconnect().catch(() => undefined);
    }
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#connecting) {
        await this.#connecting.catch(() => undefined);
        await this.#client.disconnect();
      }
    })();
    return this.#closing;
  }
}
