// A batch whose outputs outgrow the producer's local queue (many outputs per input): sent in chunks that fit, every
// output committed once, nothing aborted. The naive twin sends the same outputs in one go and fails with
// ERR__QUEUE_FULL (every retry of that batch would fail the same way: a stuck partition).
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { readTopic } from '../../scenarios/pipeline/audit.ts';
import {
  createTopics,
  deleteTopics,
  type PipelineTopics,
  scenarioKafka,
  seedInputs,
} from '../../scenarios/pipeline/topics.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import type { PipelineGuarantee, PipelineOptions } from '../../src/pipeline/types.ts';
import { errorCode, errorCodeName } from '../../src/transport/kafka/txn-errors.ts';
import { eventually } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const kafka = scenarioKafka();
const inputs = 40;
const fanOut = 25; // 40 inputs x 25 outputs = 1000 outputs in one batch, against a queue of 100 messages
const queue = { 'queue.buffering.max.messages': 100 };
const outputsOf = (seq: number) => Array.from({ length: fanOut }, (_, i) => seq * fanOut + i);

/**
 * A pipeline through the small producer queue whose transform turns each input into `fanOut` outputs (partition 0 of
 * the output topic), run until `count` inputs are committed, then closed; with the failures it reported.
 */
async function fanOutToEnd(t: TestContext, topics: PipelineTopics, count: number, extra: Partial<PipelineOptions>) {
  const failures: string[] = [];
  const pipeline = createPipeline({
    from: topics.input,
    to: topics.output,
    deadLetterTopic: topics.deadLetter,
    group: topics.group,
    transactionalId: `${topics.group}-0`,
    sessionTimeoutMs: 6000,
    logger: silentLogger,
    kafka: { rdkafka: queue },
    onFailure: (failure) => failures.push(`${failure.step}: ${failure.codeName}`),
    transform: (record) => {
      const { seq } = JSON.parse(record.value!.toString()) as { seq: number };
      return outputsOf(seq).map((out) => ({ partition: 0, key: record.key, value: JSON.stringify({ seq: out }) }));
    },
    ...extra,
  });
  t.after(() => pipeline.close());
  await pipeline.start();
  await eventually(async () => pipeline.stats().committedInputs >= count, 90_000, 'every input committed');
  await pipeline.close();
  return { pipeline, failures };
}

for (const guarantee of ['exactly-once', 'at-least-once'] as PipelineGuarantee[]) {
  test(`${guarantee}: a batch of 1000 outputs through a producer queue of 100, every output once`, async (t) => {
    if (!(await needs(t, 'kafka'))) return;
    const topics = await createTopics(kafka, 1);
    t.after(() => deleteTopics(kafka, topics));
    await seedInputs(kafka, topics, inputs);
    const { pipeline, failures } = await fanOutToEnd(t, topics, inputs, { guarantee });
    assert.deepEqual(failures, [], 'no batch failed');
    assert.equal(pipeline.stats().deadLettered, 0);
    const outputs = (await readTopic(kafka, topics.output, 'read_committed')).map(({ seq }) => seq);
    assert.deepEqual(
      outputs,
      Array.from({ length: inputs * fanOut }, (_, seq) => seq),
      'every output once, in order',
    );
  });
}

test('naive twin: the same 1000 outputs in one send through a queue of 100 fail with ERR__QUEUE_FULL', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const topics = await createTopics(kafka, 1);
  t.after(() => deleteTopics(kafka, topics));
  const producer = kafka.producer({ kafkaJS: { idempotent: true, acks: -1 }, ...queue });
  await producer.connect();
  t.after(() => producer.disconnect());
  const messages = Array.from({ length: inputs * fanOut }, (_, seq) => ({ value: JSON.stringify({ seq }) }));
  const error = await producer.send({ topic: topics.output, messages }).then(
    () => undefined,
    (failure: unknown) => failure,
  );
  assert.ok(error, 'the one send failed');
  assert.equal(errorCodeName(errorCode(error)), 'ERR__QUEUE_FULL');
});

test('exactly-once windows over 4 partitions share a queue of 100: every output once, in order per input partition', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const partitions = 4;
  const count = 2 * inputs;
  const topics = await createTopics(kafka, partitions);
  t.after(() => deleteTopics(kafka, topics));
  await seedInputs(kafka, topics, count);
  const { failures } = await fanOutToEnd(t, topics, count, { commitIntervalMs: 100 });
  assert.deepEqual(failures, [], 'no window failed');
  const outputs = (await readTopic(kafka, topics.output, 'read_committed')).map(({ seq }) => seq);
  assert.deepEqual(
    [...outputs].sort((a, b) => a - b),
    Array.from({ length: count * fanOut }, (_, seq) => seq),
    'every output once',
  );
  for (let p = 0; p < partitions; p++) {
    const ofPartition = outputs.filter((out) => Math.floor(out / fanOut) % partitions === p);
    assert.deepEqual(
      ofPartition,
      [...ofPartition].sort((a, b) => a - b),
      `in order for input partition ${p}`,
    );
  }
});
