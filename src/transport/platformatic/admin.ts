import type { Admin as ClientAdmin } from '@platformatic/kafka';
import type { Admin, TopicPartitionOffset, TopicSpec } from '../port.ts';
import type { ClientModule } from './client.ts';

const LATEST = -1n;

export class PlatformaticAdmin implements Admin {
  readonly #client: ClientAdmin;
  readonly #replicationFactor: number;
  #closing: Promise<void> | undefined;

  /** `replicationFactor` -1 asks the broker for its `default.replication.factor`. */
  constructor(client: ClientModule, settings: { brokers: string[]; clientId: string }, replicationFactor = -1) {
    this.#client = new client.Admin({ clientId: settings.clientId, bootstrapBrokers: settings.brokers });
    this.#replicationFactor = replicationFactor;
  }

  async createTopics(topics: TopicSpec[]): Promise<void> {
    // One request per partition count (the client's request takes one count for all its topics).
    const byCount = new Map<number, string[]>();
    for (const { topic, partitions } of topics) byCount.set(partitions, [...(byCount.get(partitions) ?? []), topic]);
    for (const [partitions, names] of byCount) {
      await this.#client.createTopics({ topics: names, partitions, replicas: this.#replicationFactor });
    }
  }

  listTopics(): Promise<string[]> {
    return this.#client.listTopics();
  }

  async deleteTopics(topics: string[]): Promise<void> {
    await this.#client.deleteTopics({ topics });
  }

  async committedOffsets(group: string, topic: string): Promise<TopicPartitionOffset[]> {
    const partitions = await this.#partitionsOf(topic);
    const [result] = await this.#client.listConsumerGroupOffsets({
      groups: [{ groupId: group, topics: [{ name: topic, partitionIndexes: partitions }] }],
    });
    const found = new Map(
      (result?.topics.find((t) => t.name === topic)?.partitions ?? []).map((p) => [
        p.partitionIndex,
        p.committedOffset,
      ]),
    );
    return partitions.map((partition) => ({ topic, partition, offset: String(found.get(partition) ?? -1n) }));
  }

  async endOffsets(topic: string): Promise<TopicPartitionOffset[]> {
    const partitions = await this.#partitionsOf(topic);
    const [result] = await this.#client.listOffsets({
      topics: [
        { name: topic, partitions: partitions.map((partitionIndex) => ({ partitionIndex, timestamp: LATEST })) },
      ],
    });
    return (result?.partitions ?? [])
      .map((p) => ({ topic, partition: p.partitionIndex, offset: String(p.offset) }))
      .sort((a, b) => a.partition - b.partition);
  }

  async #partitionsOf(topic: string): Promise<number[]> {
    const metadata = await this.#client.metadata({ topics: [topic] });
    const count = metadata.topics.get(topic)?.partitionsCount ?? 0;
    return Array.from({ length: count }, (_, n) => n);
  }

  close(): Promise<void> {
    this.#closing ??= this.#client.close();
    return this.#closing;
  }
}
