// A key's later row must not overtake its refused row on the topic. One transaction enqueues K 1 (300 KB, on a topic
// that takes 100 KB), K 2 (small) and another key's row; the producer makes one batch per record, as a slow main
// thread between two produce() calls did under load (and as a record over the client's batch.size always is). Real
// PostgreSQL and the real broker.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Logger } from '../../src/observability/logger.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { discardRefused } from '../../src/outbox/refused.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { eventually, freshSchema, outboxCount } from '../support/fixtures.ts';
import { keyOrder } from '../support/read-topic.ts';
import { paddedEvents, refusingRelay } from '../support/refusing-relay.ts';
import { needs } from '../support/services.ts';
import { smallTopic } from '../support/small-topic.ts';

interface Case {
  /** The relay's `maxMessageBytes` (none: its default). */
  maxMessageBytes?: number;
  /** The topic's `max.message.bytes` and K 1's padding. */
  topicBytes: number;
  pad: number;
  /** One record per batch (else the client's defaults). */
  split: boolean;
}

/**
 * Relays K 1 (too big), K 2, other 3; returns K's rows on the topic while K 1 is set aside, K's rows on the topic
 * after K 1 is discarded, and the codes of the errors the relay logged.
 */
async function run(t: import('node:test').TestContext, { maxMessageBytes, topicBytes, pad, split }: Case) {
  const { db, schema } = await freshSchema(t);
  const topic = await smallTopic(t, { maxMessageBytes: topicBytes, prefix: 'h-order-overtaken' });
  const event = paddedEvents(topic);
  await db.transaction((tx) =>
    createOutbox({ schema }).enqueue(tx, [event('K', 1, pad), event('K', 2), event('other', 3)]),
  );
  const transport = kafkaTransport({
    clientId: 'effectively-test',
    rdkafka: split ? { 'batch.num.messages': 1, 'linger.ms': 0 } : {},
  });
  const codes: string[] = [];
  const logger: Logger = { ...silentLogger, error: (_message, fields) => codes.push(String(fields?.code)) };
  const { relay, refused } = await refusingRelay(t, {
    db,
    schema,
    producerFactory: () => transport.producer(),
    ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }),
    logger,
  });
  const count = (where: string) => outboxCount(db, schema, where);
  await eventually(async () => refused.length === 1, 30_000, 'the big row set aside');
  await eventually(async () => (await count(`key <> 'K'`)) === 0, 30_000, 'the other row published');
  const keyK = () => keyOrder(transport, topic, 'K');
  const whileRefused = await keyK();
  const held = await count(`key = 'K'`);
  await discardRefused(db, { schema, seqs: [refused[0]!.seq] });
  await eventually(async () => (await count('true')) === 0, 30_000, "K's held row published after the discard");
  return { whileRefused, held, afterDiscard: await keyK(), codes, overtaken: relay.stats().overtaken };
}

test("a key's later row waits behind its refused row, even in separate batches of one send (maxMessageBytes)", async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { whileRefused, held, afterDiscard, codes, overtaken } = await run(t, {
    maxMessageBytes: 100_000,
    topicBytes: 100_000,
    pad: 300_000,
    split: true,
  });
  assert.deepEqual(whileRefused, [], 'nothing of K on the topic while K 1 is set aside');
  assert.equal(held, 1, 'K 2 held in the outbox');
  assert.deepEqual(afterDiscard, [2], 'K 2 published once, after the discard');
  assert.ok(!codes.includes('EFF_KEY_OVERTAKEN'), `logged codes: ${codes.join(', ')}`);
  assert.equal(overtaken, 0, 'stats().overtaken');
});

test('naive twin: a relay that takes the topic for one of 1 MB sends K 2 beside K 1; K 2 overtakes it (logged, coded)', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { whileRefused, held, codes, overtaken } = await run(t, { topicBytes: 100_000, pad: 300_000, split: true });
  assert.deepEqual(whileRefused, [2], `K on the topic while K 1 is set aside: ${whileRefused.join(', ')}`);
  assert.equal(held, 0);
  assert.ok(codes.includes('EFF_KEY_OVERTAKEN'), `logged codes: ${codes.join(', ')}`);
  assert.equal(overtaken, 1, 'stats().overtaken counts K 2');
});

// Kafka's default limit and a record over the client's batch.size (1,000,000): the client always sends it in a batch
// of its own, so K 2 travels apart from it without any load.
const overDefault = { topicBytes: 1_048_588, pad: 1_200_000, split: false };

test("with the defaults, a row over Kafka's default limit is not overtaken by its key's next row", async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { whileRefused, held, afterDiscard, overtaken } = await run(t, overDefault);
  assert.deepEqual(whileRefused, []);
  assert.equal(held, 1);
  assert.deepEqual(afterDiscard, [2]);
  assert.equal(overtaken, 0);
});

test('naive twin: a relay that takes the topic for one of 16 MB; K 2 overtakes the 1.2 MB K 1', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { whileRefused, held, overtaken } = await run(t, { ...overDefault, maxMessageBytes: 16 * 1024 * 1024 });
  assert.deepEqual(whileRefused, [2]);
  assert.equal(held, 0);
  assert.equal(overtaken, 1);
});
