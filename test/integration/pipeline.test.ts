// createPipeline in process: outputs to several topics, filtering, poison to the dead-letter topic in the same
// transaction, an abortable failure (abort + rewind) and a fenced producer (replaced), each committed exactly once.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { test } from 'node:test';
import { readTopic } from '../../scenarios/pipeline/audit.ts';
import {
  createTopics,
  deleteTopics,
  type PipelineTopics,
  scenarioKafka,
  seedInputs,
} from '../../scenarios/pipeline/topics.ts';
import { RetryHeaders } from '../../src/consumer/retry-topics.ts';
import { PermanentError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import type { PipelineFailure, PipelineFaultPoint, PipelineOptions } from '../../src/pipeline/types.ts';
import { eventually } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const kafka = scenarioKafka();

async function setup(t: TestContext, inputs: number): Promise<PipelineTopics> {
  const topics = await createTopics(kafka, 2);
  t.after(() => deleteTopics(kafka, topics));
  await seedInputs(kafka, topics, inputs);
  return topics;
}

function options(topics: PipelineTopics, overrides: Partial<PipelineOptions> = {}): PipelineOptions {
  return {
    from: topics.input,
    to: topics.output,
    deadLetterTopic: topics.deadLetter,
    group: topics.group,
    transactionalId: `${topics.group}-0`,
    sessionTimeoutMs: 6000,
    logger: silentLogger,
    transform: (record) => {
      const { seq } = JSON.parse(record.value!.toString()) as { seq: number };
      return { partition: record.partition, key: record.key, value: JSON.stringify({ seq }) };
    },
    ...overrides,
  };
}

async function runUntil(t: TestContext, pipelineOptions: PipelineOptions, inputs: number) {
  const pipeline = createPipeline(pipelineOptions);
  t.after(() => pipeline.close());
  await pipeline.start();
  await eventually(async () => pipeline.stats().committedInputs >= inputs, 60_000, 'every input committed');
  await pipeline.close();
  return pipeline.stats();
}

function once(point: PipelineFaultPoint, fault: () => Promise<void> | void) {
  let done = false;
  return async (at: PipelineFaultPoint) => {
    if (at !== point || done) return;
    done = true;
    await fault();
  };
}

const seqs = (records: { seq: number }[]) => records.map(({ seq }) => seq).sort((a, b) => a - b);
const range = (n: number) => Array.from({ length: n }, (_, seq) => seq);

test('outputs to two topics, a filtered input, a poison input dead-lettered with its headers', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const topics = await setup(t, 20);
  const stats = await runUntil(
    t,
    options(topics, {
      transform: (record) => {
        const { seq } = JSON.parse(record.value!.toString()) as { seq: number };
        if (seq === 7) throw new PermanentError('seven is poison');
        if (seq === 8) return null;
        const out = { key: record.key, value: JSON.stringify({ seq }) };
        return seq === 9 ? [out, { ...out, topic: topics.deadLetter, headers: { copy: 'yes' } }] : out;
      },
    }),
    20,
  );
  assert.deepEqual([stats.committedInputs, stats.outputs, stats.deadLettered], [20, 19, 1]);
  const outputs = await readTopic(kafka, topics.output, 'read_committed');
  assert.deepEqual(
    seqs(outputs),
    range(20).filter((seq) => seq !== 7 && seq !== 8),
  );
  const dead = await readTopic(kafka, topics.deadLetter, 'read_committed');
  assert.deepEqual(seqs(dead), [7, 9]);
  const letter = dead.find(({ seq }) => seq === 7)!.headers;
  assert.equal(letter[RetryHeaders.originalTopic], topics.input);
  assert.equal(letter[RetryHeaders.errorMessage], 'seven is poison');
  assert.equal(letter[RetryHeaders.errorCode], 'EFF_HANDLER_FAILED');
  assert.equal(letter[RetryHeaders.attempt], '1', 'a permanent error is not retried');
});

// Each failure in both shapes: a transaction per batch, and a window over several partitions' batches (every batch
// of the failed window is rewound, so each reports the failure).
const shapes = [
  { shape: 'a transaction per batch', extra: { commitIntervalMs: 0 } },
  { shape: 'a window of several batches', extra: { maxBatchSize: 10, commitIntervalMs: 300 } },
];

for (const { shape, extra } of shapes) {
  test(`${shape}: an abortable failure after the send: aborted, rewound, committed once; the aborted copy is there uncommitted`, async (t) => {
    if (!(await needs(t, 'kafka'))) return;
    const topics = await setup(t, 50);
    const failures: PipelineFailure[] = [];
    const stats = await runUntil(
      t,
      options(topics, {
        ...extra,
        onFailure: (failure) => failures.push(failure),
        faults: once('pipeline:after-send', () => {
          throw new Error('injected failure after the send');
        }),
      }),
      50,
    );
    // one batch's transaction, or each batch of the window
    if (extra.commitIntervalMs) assert.ok(failures.length >= 1, 'the failure reported');
    else assert.equal(failures.length, 1);
    assert.deepEqual(new Set(failures.map((failure) => failure.action)), new Set(['aborted']));
    assert.equal(stats.producersRecreated, 0);
    assert.deepEqual(seqs(await readTopic(kafka, topics.output, 'read_committed')), range(50));
    const raw = await readTopic(kafka, topics.output, 'read_uncommitted');
    assert.ok(raw.length > 50, `the aborted copy is on the topic: ${raw.length} records`);
  });

  test(`${shape}: a producer fenced by a newer one with its id: replaced, the batch redone, committed once`, async (t) => {
    if (!(await needs(t, 'kafka'))) return;
    const topics = await setup(t, 50);
    const failures: PipelineFailure[] = [];
    const pipelineOptions = options(topics, {
      ...extra,
      onFailure: (failure) => failures.push(failure),
      faults: once('pipeline:after-send-offsets', async () => {
        // Another producer with the same transactional id: its initTransactions bumps the epoch and aborts ours.
        const intruder = kafka.producer({
          kafkaJS: { transactionalId: `${topics.group}-0`, idempotent: true, acks: -1 },
        });
        await intruder.connect();
        await intruder.disconnect();
      }),
    });
    const stats = await runUntil(t, pipelineOptions, 50);
    assert.deepEqual(
      new Set(failures.map((failure) => failure.action)),
      new Set(['recreated']),
      JSON.stringify(failures),
    );
    assert.match(failures[0]?.codeName ?? '', /FENCED|EPOCH/);
    assert.equal(stats.producersRecreated, 1);
    assert.deepEqual(seqs(await readTopic(kafka, topics.output, 'read_committed')), range(50));
  });
}

test('invalid options are refused with EFF_INVALID_OPTIONS naming the field', () => {
  const base = {
    from: 'in',
    to: 'out',
    group: 'g',
    transactionalId: 'tx',
    transform: () => null,
  } satisfies PipelineOptions;
  for (const [field, bad] of [
    ['from', { from: [] }],
    ['to', { to: '' }],
    ['transactionalId', { transactionalId: 'a\u0000b' }],
    ['guarantee', { guarantee: 'maybe-once' }],
    ['maxBatchSize', { maxBatchSize: 0 }],
    ['sessionTimeoutMs', { sessionTimeoutMs: 10 }],
    ['commitIntervalMs', { commitIntervalMs: -1 }],
    ['commitIntervalMs', { commitIntervalMs: 1.5 }],
  ] as const) {
    assert.throws(
      () => createPipeline({ ...base, ...(bad as Partial<PipelineOptions>) }),
      (error: { code?: string; details?: { field?: string } }) =>
        error.code === 'EFF_INVALID_OPTIONS' && error.details?.field === field,
      field,
    );
  }
});

// One transaction per window over several partitions' batches (`commitIntervalMs`): fewer transactions than batches,
// each input still committed once; the per-batch default is the twin (a transaction per batch).
for (const commitIntervalMs of [300, 0]) {
  test(`commitIntervalMs ${commitIntervalMs}: ${commitIntervalMs ? 'several batches share a transaction' : 'twin: a transaction per batch'}`, async (t) => {
    if (!(await needs(t, 'kafka'))) return;
    const topics = await setup(t, 200);
    const stats = await runUntil(t, options(topics, { maxBatchSize: 10, commitIntervalMs }), 200);
    const perTransaction = stats.committedInputs / stats.transactions;
    t.diagnostic(
      `${stats.transactions} transactions, ${perTransaction.toFixed(1)} inputs each (batches of 10 at most)`,
    );
    if (commitIntervalMs) assert.ok(perTransaction > 10, `more than one batch per transaction: ${perTransaction}`);
    else assert.ok(perTransaction <= 10, `one batch per transaction: ${perTransaction}`);
    assert.deepEqual(seqs(await readTopic(kafka, topics.output, 'read_committed')), range(200));
  });
}
