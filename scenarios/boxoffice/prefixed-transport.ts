// A transport whose topics all carry a prefix on the broker: a scenario run on the shared Kafka broker gets topics of
// its own (`<prefix>boxoffice.orders`...) while the services keep the names they know. Records, positions and
// partitions are renamed on the way in and out; everything else is the wrapped transport's.
import type { Admin, Consumer, Producer, TopicPartition, Transport } from '../../src/transport/port.ts';

export function prefixedTransport(inner: Transport, prefix: string): Transport {
  const out = (topic: string) => `${prefix}${topic}`;
  const back = (topic: string) => (topic.startsWith(prefix) ? topic.slice(prefix.length) : topic);
  const outAll = <T extends TopicPartition>(items: T[]) => items.map((item) => ({ ...item, topic: out(item.topic) }));
  const backAll = <T extends TopicPartition>(items: T[]) => items.map((item) => ({ ...item, topic: back(item.topic) }));

  const producer = (options?: Parameters<Transport['producer']>[0]): Producer => {
    const p = inner.producer(options);
    return {
      connect: () => p.connect(),
      send: (records) => p.send(records.map((record) => ({ ...record, topic: out(record.topic) }))),
      close: () => p.close(),
    };
  };

  const consumer = (options: Parameters<Transport['consumer']>[0]): Consumer => {
    const c = inner.consumer({
      ...options,
      topics: options.topics.map(out),
      ...(options.onAssign ? { onAssign: (parts: TopicPartition[]) => options.onAssign!(backAll(parts)) } : {}),
      ...(options.onRevoke ? { onRevoke: (parts: TopicPartition[]) => options.onRevoke!(backAll(parts)) } : {}),
    });
    return {
      run: (handler) =>
        c.run((batch, control) =>
          handler(
            {
              ...batch,
              topic: back(batch.topic),
              records: batch.records.map((record) => ({ ...record, topic: back(record.topic) })),
            },
            control,
          ),
        ),
      commit: (offsets) => c.commit(outAll(offsets)),
      pause: (partitions) => c.pause(outAll(partitions)),
      resume: (partitions) => c.resume(outAll(partitions)),
      seek: (position) => c.seek({ ...position, topic: out(position.topic) }),
      close: () => c.close(),
    };
  };

  const admin = (): Admin => {
    const a = inner.admin();
    return {
      createTopics: (topics) => a.createTopics(topics.map((spec) => ({ ...spec, topic: out(spec.topic) }))),
      listTopics: async () => (await a.listTopics()).filter((t) => t.startsWith(prefix)).map(back),
      deleteTopics: (topics) => a.deleteTopics(topics.map(out)),
      committedOffsets: async (group, topic) => backAll(await a.committedOffsets(group, out(topic))),
      endOffsets: async (topic) => backAll(await a.endOffsets(out(topic))),
      close: () => a.close(),
    };
  };

  return { name: inner.name, producer, consumer, admin };
}
