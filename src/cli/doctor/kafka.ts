// The Kafka side of the doctor: the brokers answer, each topic keeps its records no longer than the dedup rows of the
// groups reading it, each dead-letter topic has the partitions of its source.
import { deadLetterTopicName } from '../../consumer/retry-topics.ts';
import { KafkaJS } from '../../transport/kafka/client.ts';
import { type Finding, finding, showMs } from './finding.ts';
import type { GroupRetention } from './groups.ts';
import { topicConfigs } from './topic-configs.ts';

type ClientAdmin = ReturnType<InstanceType<typeof KafkaJS.Kafka>['admin']>;

/** A connected admin of the Kafka client, for what the transport's admin does not ask (groups' topics, metadata). */
export async function kafkaAdmin(brokers: readonly string[], timeoutMs: number): Promise<ClientAdmin> {
  const kafka = new KafkaJS.Kafka({
    kafkaJS: { brokers: [...brokers], clientId: 'effectively-doctor', logLevel: KafkaJS.logLevel.NOTHING },
    'socket.connection.setup.timeout.ms': timeoutMs,
  });
  const admin = kafka.admin();
  await admin.connect();
  return admin;
}

/** The topics `group` committed offsets on. */
export async function committedTopics(admin: ClientAdmin, group: string): Promise<string[]> {
  const offsets = await admin.fetchOffsets({ groupId: group });
  return offsets.map((entry) => entry.topic).sort();
}

/** Partitions per topic, from the cluster's metadata (missing topics left out). */
export async function partitionCounts(admin: ClientAdmin, topics: readonly string[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  if (topics.length === 0) return counts;
  for (const topic of await admin.fetchTopicMetadata({ topics: [...topics] }))
    counts.set(topic.name, topic.partitions.length);
  return counts;
}

const forever = Number.POSITIVE_INFINITY;

/**
 * Per topic: its `retention.ms` against the shortest dedup retention of the groups reading it. A record redelivered
 * or replayed (a group reset to the earliest offset, a redrive) while the broker still has it, but after its dedup
 * row was purged, is applied a second time.
 */
export async function checkRetention(
  broker: string,
  readers: ReadonlyMap<string, readonly GroupRetention[]>,
): Promise<Finding[]> {
  const topics = [...readers.keys()].filter((topic) => !topic.endsWith('-dlt'));
  const configs = await topicConfigs(broker, topics, ['retention.ms']);
  return configs.map(({ topic, configs: entries, error }) => {
    if (error) return finding('fail', 'retention', `${topic}: could not read retention.ms (${error})`);
    const value = Number(entries.get('retention.ms') ?? Number.NaN);
    const retentionMs = value < 0 ? forever : value;
    const kept = (readers.get(topic) ?? []).filter((g) => g.keepMs !== undefined);
    if (kept.length === 0)
      return finding('ok', 'retention', `${topic}: no group reading it purges its dedup rows (kept for ever)`);
    const shortest = kept.reduce((a, b) => (b.keepMs! < a.keepMs! ? b : a));
    const retention = retentionMs === forever ? 'for ever' : showMs(retentionMs);
    const against = `retention.ms ${retention} against the dedup retention ${showMs(shortest.keepMs!)} of group ${shortest.name}`;
    if (Number.isNaN(value)) return finding('fail', 'retention', `${topic}: the broker gave no retention.ms`);
    if (retentionMs > shortest.keepMs!)
      return finding(
        'warn',
        'retention',
        `${topic}: ${against}: a record redelivered or replayed after ${showMs(shortest.keepMs!)} finds its dedup row purged and is applied again`,
        `raise the group's \`retention.keepMs\` to at least ${retention === 'for ever' ? 'the replay window you allow' : retention} plus the redrive window, or lower the topic's retention.ms`,
      );
    return finding('ok', 'retention', `${topic}: ${against}`);
  });
}

/** Each dead-letter topic present (`<topic>-dlt`) has at least the partitions of its source topic. */
export async function checkDeadLetterPartitions(admin: ClientAdmin, topics: readonly string[]): Promise<Finding[]> {
  const existing = new Set(await admin.listTopics());
  const pairs = topics.filter((topic) => existing.has(deadLetterTopicName(topic)));
  const counts = await partitionCounts(admin, [...pairs, ...pairs.map(deadLetterTopicName)]);
  return pairs.map((topic) => {
    const dlt = deadLetterTopicName(topic);
    const source = counts.get(topic) ?? 0;
    const dead = counts.get(dlt) ?? 0;
    const what = `${dlt}: ${dead} partitions against ${source} of ${topic}`;
    if (dead < source)
      return finding(
        'warn',
        'dlt',
        what,
        `add partitions to ${dlt} up to ${source} (the consumer creates it with its source's count; Kafka can add partitions, never remove them)`,
      );
    return finding('ok', 'dlt', what);
  });
}
