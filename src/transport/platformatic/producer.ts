import type { Producer as ClientProducer } from '@platformatic/kafka';
import { EffectivelyError, ErrorCodes } from '../../errors.ts';
import { toMessage } from '../kafka/producer.ts';
import type { OutgoingRecord, Producer } from '../port.ts';
import type { ClientModule } from './client.ts';

type Text = string | Buffer;
const bytes = (value: Text | null | undefined) =>
  value === null || value === undefined ? undefined : typeof value === 'string' ? Buffer.from(value) : value;

/**
 * Idempotent producer (acks=all, one request in flight per broker, the broker drops a retried duplicate), keys
 * hashed as the Java client and the Kafka transport hash them (murmur2, positive), so a key lands on the same partition
 * whichever transport wrote it. A record Kafka cannot carry (a NUL in a header name) is refused before anything is
 * sent, as by the Kafka transport. A send is not transactional: `sendInTransaction` is not offered (see docs/kafka.md).
 */
export class PlatformaticProducer implements Producer {
  readonly #client: ClientProducer<Text, Buffer, Text, Text>;
  #closing: Promise<void> | undefined;

  constructor(client: ClientModule, settings: { brokers: string[]; clientId: string }) {
    this.#client = new client.Producer<Text, Buffer, Text, Text>({
      clientId: settings.clientId,
      bootstrapBrokers: settings.brokers,
      idempotent: true,
      acks: client.ProduceAcks.ALL,
      partitioner: client.compatibilityPartitioner as never,
      autocreateTopics: false,
      // The client retries an idempotent send for ever by default: a broker down would hold the relay's pass without
      // a word. About 10 s of tries, then the send fails (EFF_TRANSPORT, retryable) and the caller's retry takes over.
      retries: 40,
      retryDelay: 250,
      serializers: { key: bytes, headerKey: bytes, headerValue: bytes },
    });
  }

  async connect(): Promise<void> {
    await this.#client.metadata({ topics: [] });
  }

  async send(records: readonly OutgoingRecord[]): Promise<void> {
    if (records.length === 0) return;
    if (this.#closing) throw new EffectivelyError(ErrorCodes.EFF_CLOSED, 'producer is closed');
    const messages = records.map((record) => {
      const { key, value, headers } = toMessage(record);
      return { topic: record.topic, key: (key ?? undefined) as Text, value: value ?? (undefined as never), headers };
    });
    try {
      await this.#client.send({ messages });
    } catch (error) {
      throw new EffectivelyError(ErrorCodes.EFF_TRANSPORT, `kafka send failed: ${(error as Error).message}`, {
        retryable: true,
        cause: error,
      });
    }
  }

  close(): Promise<void> {
    this.#closing ??= this.#client.close() as Promise<void>;
    return this.#closing;
  }
}
