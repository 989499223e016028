import { topicNameProblem } from '../envelope/topic-name.ts';
import { kafkaTransport } from '../transport/kafka/transport.ts';
import { printable } from './printable.ts';

export interface TopicsArgs {
  topics: string[];
  partitions?: string | undefined;
}

/**
 * effectively topics create <topic>... [--partitions n]: creates the topics that do not exist yet (the cluster's
 * default replication factor; existing ones are left as they are), like `migrate` for the database. For clusters that
 * do not create topics on first use, and so a consumer started first finds its topic.
 */
export async function topicsCommand(action: string | undefined, args: TopicsArgs): Promise<number> {
  const partitions = args.partitions === undefined ? 6 : Number(args.partitions);
  const bad = args.topics.find((topic) => topicNameProblem(topic) !== undefined);
  if (
    action !== 'create' ||
    args.topics.length === 0 ||
    bad !== undefined ||
    !(Number.isInteger(partitions) && partitions > 0)
  ) {
    if (bad !== undefined) console.error(`topics: \`${printable(bad)}\` ${topicNameProblem(bad)}`);
    console.error('usage: effectively topics create <topic>... [--partitions n]   (default 6 partitions)');
    return 2;
  }
  const admin = kafkaTransport({ clientId: 'effectively-topics' }).admin();
  try {
    const existing = new Set(await admin.listTopics());
    const fresh = args.topics.filter((topic) => !existing.has(topic));
    if (fresh.length > 0) await admin.createTopics(fresh.map((topic) => ({ topic, partitions })));
    if (fresh.length > 0) console.log(`topics: created ${fresh.join(', ')} (${partitions} partitions)`);
    for (const topic of args.topics.filter((name) => existing.has(name))) {
      const has = (await admin.endOffsets(topic)).length;
      const differs =
        has === partitions
          ? ''
          : ` (not ${partitions}: a topic's partitions are changed by hand, never by this command)`;
      console.log(`topics: ${topic} existed with ${has} partitions${differs}`);
    }
  } finally {
    await admin.close();
  }
  return 0;
}
