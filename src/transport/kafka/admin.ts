import type { Admin, TopicPartitionOffset, TopicSpec } from '../port.ts';
import type { Kafka } from './client.ts';

type ClientAdmin = ReturnType<Kafka['admin']>;

export class KafkaAdmin implements Admin {
  readonly #client: ClientAdmin;
  readonly #replicationFactor: number;
  #connecting: Promise<void> | undefined;
  #closing: Promise<void> | undefined;

  /** `replicationFactor` -1 asks the broker for its `default.replication.factor` (CreateTopics v4+). */
  constructor(kafka: Kafka, replicationFactor = -1) {
    this.#client = kafka.admin();
    this.#replicationFactor = replicationFactor;
  }

  #connect(): Promise<void> {
    this.#connecting ??= this.#client.connect();
    return this.#connecting;
  }

  async createTopics(topics: TopicSpec[]): Promise<void> {
    await this.#connect();
    await this.#client.createTopics({
      topics: topics.map(({ topic, partitions }) => ({
        topic,
        numPartitions: partitions,
        replicationFactor: this.#replicationFactor,
      })),
    });
  }

  /** The cluster's topics, from its metadata (asking creates nothing, even with auto-creation on). */
  async listTopics(): Promise<string[]> {
    await this.#connect();
    return this.#client.listTopics();
  }

  async deleteTopics(topics: string[]): Promise<void> {
    await this.#connect();
    await this.#client.deleteTopics({ topics });
  }

  async committedOffsets(group: string, topic: string): Promise<TopicPartitionOffset[]> {
    await this.#connect();
    const result = await this.#client.fetchOffsets({ groupId: group, topics: [topic] });
    return result.flatMap((entry) =>
      entry.partitions.map((p) => ({ topic: entry.topic, partition: p.partition, offset: String(p.offset) })),
    );
  }

  async endOffsets(topic: string): Promise<TopicPartitionOffset[]> {
    await this.#connect();
    const result = await this.#client.fetchTopicOffsets(topic);
    return result.map((p) => ({ topic, partition: p.partition, offset: String(p.high) }));
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
