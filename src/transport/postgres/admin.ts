import { loadSqlSet } from '../../db/sql.ts';
import type { Admin, TopicPartitionOffset, TopicSpec } from '../port.ts';
import type { ResolvedPostgresOptions } from './options.ts';

const files = {
  ensureTopic: 'sql/ensure-topic.sql',
  deleteTopics: 'sql/delete-topics.sql',
  committed: 'sql/committed.sql',
  endOffsets: 'sql/end-offsets.sql',
  purge: 'sql/purge.sql',
  listTopics: 'sql/list-topics.sql',
};

export class PostgresAdmin implements Admin {
  readonly #options: ResolvedPostgresOptions;
  readonly #sql: Record<keyof typeof files, string>;

  constructor(options: ResolvedPostgresOptions) {
    this.#options = options;
    this.#sql = loadSqlSet(import.meta.url, files, options.schema);
  }

  async createTopics(topics: TopicSpec[]): Promise<void> {
    for (const { topic, partitions } of topics)
      await this.#options.db.query(this.#sql.ensureTopic, [topic, partitions]);
  }

  async listTopics(): Promise<string[]> {
    const { rows } = await this.#options.db.query<{ topic: string }>(this.#sql.listTopics);
    return rows.map((row) => row.topic);
  }

  async deleteTopics(topics: string[]): Promise<void> {
    await this.#options.db.query(this.#sql.deleteTopics, [topics]);
  }

  async committedOffsets(group: string, topic: string): Promise<TopicPartitionOffset[]> {
    const { rows } = await this.#options.db.query<{ partition: number; offset: string }>(this.#sql.committed, [
      group,
      topic,
    ]);
    return rows.map((row) => ({ topic, partition: row.partition, offset: row.offset }));
  }

  async endOffsets(topic: string): Promise<TopicPartitionOffset[]> {
    const { rows } = await this.#options.db.query<{ partition: number; offset: string }>(this.#sql.endOffsets, [topic]);
    return rows.map((row) => ({ topic, partition: row.partition, offset: row.offset }));
  }

  /** Retention: deletes records older than `olderThanMs`; returns how many went. */
  async purgeRecords(olderThanMs: number, chunk = 5000): Promise<number> {
    let total = 0;
    for (;;) {
      const result = await this.#options.db.query(this.#sql.purge, [olderThanMs, chunk]);
      total += result.rowCount ?? 0;
      if ((result.rowCount ?? 0) < chunk) return total;
    }
  }

  async close(): Promise<void> {}
}
