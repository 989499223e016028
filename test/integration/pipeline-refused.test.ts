// The pipeline and a write refused for one input (issue 27, item 1). Its transactional producer kept the client's
// 1,000,000-byte message limit while the broker allows 16 MB: a larger output failed its batch, which was aborted and
// redone for ever (nothing pinned the failure on one input). Now the producer allows what the broker allows, and a
// refusal that belongs to one record (here: the output topic's `max.message.bytes`) is bisected down to that input,
// which becomes a dead letter, trimmed to what its topic takes, saying what it dropped; the rest of the batch goes on.
// Real broker.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { test } from 'node:test';
import { readTopic } from '../../scenarios/pipeline/audit.ts';
import { createTopics, deleteTopics, scenarioKafka, seedInputs } from '../../scenarios/pipeline/topics.ts';
import { RetryHeaders } from '../../src/consumer/retry-topics.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import type { PipelineFailure, PipelineOptions } from '../../src/pipeline/types.ts';
import { eventually } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const kafka = scenarioKafka();
const bigBytes = 2 * 1024 * 1024;
const range = (n: number) => Array.from({ length: n }, (_, seq) => seq);
const seqs = (records: { seq: number }[]) => records.map(({ seq }) => seq).sort((a, b) => a - b);

async function run(
  t: TestContext,
  inputs: number,
  bigSeq: number,
  maxMessageBytes?: number,
  extra: Partial<PipelineOptions> = {},
) {
  const topics = await createTopics(kafka, 2, maxMessageBytes === undefined ? {} : { maxMessageBytes });
  t.after(() => deleteTopics(kafka, topics));
  await seedInputs(kafka, topics, inputs, { seq: bigSeq, bytes: bigBytes });
  const failures: PipelineFailure[] = [];
  const options: PipelineOptions = {
    from: topics.input,
    to: topics.output,
    deadLetterTopic: topics.deadLetter,
    group: topics.group,
    transactionalId: `${topics.group}-0`,
    sessionTimeoutMs: 6000,
    logger: silentLogger,
    onFailure: (failure) => failures.push(failure),
    // The output carries the input's value: the large input makes a large output.
    transform: (record) => ({ partition: record.partition, key: record.key, value: record.value }),
    ...extra,
  };
  const pipeline = createPipeline(options);
  t.after(() => pipeline.close());
  await pipeline.start();
  await eventually(async () => pipeline.stats().committedInputs >= inputs, 40_000, 'every input committed').catch(
    (error: unknown) => {
      const stats = JSON.stringify(pipeline.stats());
      throw new Error(`${(error as Error).message}; stats ${stats}; ${failures.length} failures`);
    },
  );
  await pipeline.close();
  return { topics, stats: pipeline.stats(), failures };
}

test('an output over 1 MB goes out: the producer allows what the broker allows', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const { topics, stats, failures } = await run(t, 20, 11);
  assert.deepEqual([stats.committedInputs, stats.outputs, stats.deadLettered], [20, 20, 0]);
  assert.deepEqual(failures, [], 'no transaction aborted');
  assert.deepEqual(seqs(await readTopic(kafka, topics.output, 'read_committed')), range(20));
});

// with `commitIntervalMs`, the refusal fails the window: the refused batch is bisected alone, the others rewound
for (const extra of [{ commitIntervalMs: 0 }, { commitIntervalMs: 100, maxBatchSize: 20 }]) {
  const name = extra.commitIntervalMs ? 'in a window of several partitions' : 'a transaction per batch';
  test(`an output its topic refuses (${name}): bisected to that input, dead-lettered without its value, the rest output once`, async (t) => {
    if (!(await needs(t, 'kafka'))) return;
    const inputs = 200;
    const bigSeq = 101;
    const { topics, stats } = await run(t, inputs, bigSeq, 1024 * 1024, extra);
    assert.deepEqual([stats.committedInputs, stats.outputs, stats.deadLettered], [inputs, inputs - 1, 1]);
    const outputs = seqs(await readTopic(kafka, topics.output, 'read_committed'));
    assert.deepEqual(
      outputs,
      range(inputs).filter((seq) => seq !== bigSeq),
      'every other input output once',
    );
    const dead = await readTopic(kafka, topics.deadLetter, 'read_committed');
    assert.deepEqual(seqs(dead), [bigSeq], 'the large input is the one dead letter');
    const headers = dead[0]!.headers;
    assert.equal(headers[RetryHeaders.errorCode], 'ERR_MSG_SIZE_TOO_LARGE');
    assert.equal(headers[RetryHeaders.originalOffset], String(Math.floor(bigSeq / 2)));
    assert.match(headers[RetryHeaders.dropped] ?? '', /^value \(\d{7} bytes\)$/, 'it says what it dropped');
  });
}
