import { EffectivelyError, ErrorCodes } from '../../errors.ts';
import type { Consumer, OutgoingRecord, Producer, TopicPartitionOffset } from '../port.ts';
import type { Kafka } from './client.ts';
import { KafkaConsumer } from './consumer.ts';

type ClientProducer = ReturnType<Kafka['producer']>;

function groupByTopic(records: readonly OutgoingRecord[]) {
  const byTopic = new Map<
    string,
    { key: string | Buffer | null; value: Buffer | null; headers: Record<string, string | Buffer> }[]
  >();
  for (const record of records) {
    const messages = byTopic.get(record.topic) ?? [];
    if (messages.length === 0) byTopic.set(record.topic, messages);
    messages.push({ key: record.key, value: record.value, headers: record.headers });
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
}

/** Idempotent producer: acks=all and enable.idempotence, so a retried send never duplicates or reorders on the broker. */
export class KafkaProducer implements Producer {
  readonly #client: ClientProducer;
  #connecting: Promise<void> | undefined;
  #closing: Promise<void> | undefined;

  readonly #transactional: boolean;

  constructor(kafka: Kafka, rdkafka: Record<string, string | number | boolean>, transactionalId?: string) {
    this.#transactional = transactionalId !== undefined;
    this.#client = kafka.producer({
      kafkaJS: {
        idempotent: true,
        acks: -1,
        ...(transactionalId === undefined ? {} : { transactionalId, maxInFlightRequests: 1 }),
      },
      // The relay hands over whole batches at once; a short linger keeps single events fast (latency) without
      // splitting batches.
      'linger.ms': 1,
      // Room for large records (the broker script allows 16 MB); a record over the limit fails its send, loudly.
      'message.max.bytes': 16 * 1024 * 1024,
      ...rdkafka,
    });
  }

  connect(): Promise<void> {
    this.#connecting ??= this.#client.connect();
    return this.#connecting;
  }

  async send(records: readonly OutgoingRecord[]): Promise<void> {
    if (records.length === 0) return;
    if (this.#closing) throw new EffectivelyError(ErrorCodes.EFF_CLOSED, 'producer is closed');
    await this.connect();
    try {
      // sendBatch keeps each topic's messages in the order given; with idempotence the broker keeps it too.
      await this.#client.sendBatch({ topicMessages: groupByTopic(records) });
    } catch (error) {
      throw new EffectivelyError(ErrorCodes.EFF_TRANSPORT, `kafka send failed: ${(error as Error).message}`, {
        retryable: true,
        cause: error,
      });
    }
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
    const transaction = await this.#client.transaction();
    try {
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
      await transaction.abort().catch(() => undefined);
      throw new EffectivelyError(ErrorCodes.EFF_TRANSPORT, `kafka transaction aborted: ${(error as Error).message}`, {
        retryable: true,
        cause: error,
      });
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
