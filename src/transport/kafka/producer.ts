import { EffectivelyError, ErrorCodes } from '../../errors.ts';
import type { OutgoingRecord, Producer } from '../port.ts';
import type { Kafka } from './client.ts';

type ClientProducer = ReturnType<Kafka['producer']>;

function groupByTopic(records: readonly OutgoingRecord[]) {
  const byTopic = new Map<
    string,
    { key: string | null; value: Buffer | null; headers: Record<string, string | Buffer> }[]
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

  constructor(kafka: Kafka, rdkafka: Record<string, string | number | boolean>) {
    this.#client = kafka.producer({
      kafkaJS: { idempotent: true, acks: -1 },
      'linger.ms': 5,
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
