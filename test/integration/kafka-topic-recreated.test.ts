// A Kafka topic deleted and created again with another partition count (issue 38, point 5, on the real broker). A
// producer hashes a key by the partition count of its client's metadata, which librdkafka refreshed every 5 minutes:
// for that long a producer that knew the old topic put keys on other partitions than a producer that did not (one key
// on two partitions). The transport's producers now refresh it every 5 s (as its consumers do): once that passed, both
// agree. The naive twin is a producer with librdkafka's default refresh, in the same run. (The group's offsets are the
// broker's: Kafka removes a deleted topic's committed offsets itself.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { silentLogger } from '../../src/observability/logger.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import type { Producer } from '../../src/transport/port.ts';
import { eventually, randomName } from '../support/fixtures.ts';
import { readTopic } from '../support/read-topic.ts';
import { needs } from '../support/services.ts';

const keys = Array.from({ length: 24 }, (_, n) => `order-${n}`);

test('a producer that knew a deleted topic partitions by the new count within seconds of its re-creation; with the default refresh it does not (naive twin)', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const transport = kafkaTransport({ clientId: 'effectively-test', logger: silentLogger });
  const naiveTransport = kafkaTransport({
    clientId: 'effectively-test',
    logger: silentLogger,
    rdkafka: { 'topic.metadata.refresh.interval.ms': 300_000 },
  });
  const topic = randomName('recreated').replace('_', '-');
  const admin = transport.admin();
  t.after(async () => {
    await admin.deleteTopics([topic]).catch(() => undefined);
    await admin.close();
  });
  const producers: Producer[] = [];
  t.after(() => Promise.all(producers.map((producer) => producer.close())));
  const producer = (of = transport) => {
    const made = of.producer();
    producers.push(made);
    return made;
  };
  const send = (to: Producer, who: string) =>
    to.send(keys.map((key) => ({ topic, key, value: Buffer.from(who), headers: {} })));

  await admin.createTopics([{ topic, partitions: 3 }]);
  const remembering = producer();
  const naive = producer(naiveTransport);
  await send(remembering, 'old');
  await send(naive, 'old');
  await admin.deleteTopics([topic]);
  // The deletion completes in the background: created again as soon as the broker takes it.
  await eventually(
    async () =>
      admin.createTopics([{ topic, partitions: 7 }]).then(
        () => true,
        () => false,
      ),
    20_000,
    'the topic created again',
  );
  // The transport's refresh interval and a margin; the naive producer waits as long.
  await new Promise((resolve) => setTimeout(resolve, 6500));
  await send(producer(), 'fresh');
  await send(remembering, 'remembering');
  await send(naive, 'naive');

  const records = await readTopic(transport, topic, 3 * keys.length);
  const partitionOf = (who: string) =>
    new Map(records.filter((r) => r.value?.toString() === who).map((r) => [r.key!.toString(), r.partition]));
  const fresh = partitionOf('fresh');
  const split = (who: string) => keys.filter((key) => partitionOf(who).get(key) !== fresh.get(key));
  assert.equal(fresh.size, keys.length);
  assert.deepEqual(split('remembering'), [], 'the producer that knew the old topic agrees with a fresh one');
  assert.ok(split('naive').length > 0, 'naive twin: the default refresh still hashes by the old count');
});
