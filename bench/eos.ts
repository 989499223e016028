// The transactional pipeline's throughput against the same pipeline at-least-once, same inputs, same run.
import { randomBytes } from 'node:crypto';
import {
  createTopics,
  deleteTopics,
  type PipelineTopics,
  scenarioKafka,
  seedInputs,
} from '../scenarios/pipeline/topics.ts';
import { silentLogger } from '../src/observability/logger.ts';
import { createPipeline } from '../src/pipeline/pipeline.ts';
import type { PipelineGuarantee } from '../src/pipeline/types.ts';

export interface EosVsAloOptions {
  /** Inputs (~40-byte JSON) each pipeline copies; default 50,000. */
  inputs?: number;
  /** Input partitions; default 6. */
  partitions?: number;
  /** Records per transaction (one partition's batch); default 1000. */
  maxBatchSize?: number;
  /** Per pipeline; default 120,000 ms. */
  timeoutMs?: number;
  /**
   * Also runs exactly-once with this `commitIntervalMs` (one transaction per window over the partitions' batches) in
   * each round, after the other two: `windowedRatio` beside `ratio`. Default: not run.
   */
  commitIntervalMs?: number;
  /** Passes of each, interleaved (alo, eos, alo, eos…); each side's best pass counts (the machine is shared). Default 2. */
  rounds?: number;
}

export interface EosVsAloResult {
  inputs: number;
  /** Inputs/s, from the first committed batch to the last (the group join is not counted). */
  exactlyOncePerSecond: number;
  atLeastOncePerSecond: number;
  /** exactlyOncePerSecond / atLeastOncePerSecond: the issue's target is >= 0.8. Printed as `eos_vs_alo=X`. */
  ratio: number;
  /** Inputs per transaction (per partition batch) in the best exactly-once pass: what each transaction's cost is spread over. */
  inputsPerTransaction: number;
  /** With `commitIntervalMs`: the windowed exactly-once pass, its ratio to at-least-once, its inputs per transaction. */
  windowedPerSecond?: number;
  windowedRatio?: number;
  windowedInputsPerTransaction?: number;
}

interface Pass {
  perSecond: number;
  inputsPerTransaction: number;
}

async function measure(
  topics: PipelineTopics,
  guarantee: PipelineGuarantee,
  inputs: number,
  maxBatchSize: number,
  timeoutMs: number,
  commitIntervalMs = 0,
): Promise<Pass> {
  const group = `${topics.group}-${guarantee}-${randomBytes(3).toString('hex')}`;
  const pipeline = createPipeline({
    from: topics.input,
    to: topics.output,
    deadLetterTopic: topics.deadLetter,
    group,
    transactionalId: `${group}-0`,
    guarantee,
    maxBatchSize,
    commitIntervalMs,
    logger: silentLogger,
    transform: (record) => ({ partition: record.partition, key: record.key, value: record.value }),
  });
  try {
    await pipeline.start();
    const deadline = Date.now() + timeoutMs;
    let first: { at: number; committed: number } | undefined;
    for (;;) {
      const committed = pipeline.stats().committedInputs;
      if (committed > 0 && !first) first = { at: performance.now(), committed };
      if (committed >= inputs) break;
      if (Date.now() > deadline) throw new Error(`bench eos: ${guarantee} committed ${committed}/${inputs} in time`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const seconds = (performance.now() - first!.at) / 1000;
    const { committedInputs, transactions } = pipeline.stats();
    return { perSecond: (inputs - first!.committed) / seconds, inputsPerTransaction: committedInputs / transactions };
  } finally {
    await pipeline.close();
  }
}

/**
 * Seeds the inputs once, then runs the at-least-once pipeline and the exactly-once one over them, each pass with a
 * group of its own (so it reads every input).
 */
export async function measureEosVsAlo(options: EosVsAloOptions = {}): Promise<EosVsAloResult> {
  const inputs = options.inputs ?? 50_000;
  const maxBatchSize = options.maxBatchSize ?? 1000;
  const timeoutMs = options.timeoutMs ?? 120_000;
  const kafka = scenarioKafka();
  const topics = await createTopics(kafka, options.partitions ?? 6);
  try {
    await seedInputs(kafka, topics, inputs);
    let atLeastOncePerSecond = 0;
    let exactlyOncePerSecond = 0;
    let inputsPerTransaction = 0;
    let windowed: Pass | undefined;
    for (let round = 0; round < (options.rounds ?? 2); round++) {
      const alo = await measure(topics, 'at-least-once', inputs, maxBatchSize, timeoutMs);
      const eos = await measure(topics, 'exactly-once', inputs, maxBatchSize, timeoutMs);
      atLeastOncePerSecond = Math.max(atLeastOncePerSecond, alo.perSecond);
      if (eos.perSecond > exactlyOncePerSecond) {
        exactlyOncePerSecond = eos.perSecond;
        inputsPerTransaction = eos.inputsPerTransaction;
      }
      if (options.commitIntervalMs) {
        const pass = await measure(topics, 'exactly-once', inputs, maxBatchSize, timeoutMs, options.commitIntervalMs);
        if (!windowed || pass.perSecond > windowed.perSecond) windowed = pass;
      }
    }
    return {
      inputs,
      exactlyOncePerSecond: Math.round(exactlyOncePerSecond),
      atLeastOncePerSecond: Math.round(atLeastOncePerSecond),
      ratio: Number((exactlyOncePerSecond / atLeastOncePerSecond).toFixed(2)),
      inputsPerTransaction: Math.round(inputsPerTransaction),
      ...(windowed && {
        windowedPerSecond: Math.round(windowed.perSecond),
        windowedRatio: Number((windowed.perSecond / atLeastOncePerSecond).toFixed(2)),
        windowedInputsPerTransaction: Math.round(windowed.inputsPerTransaction),
      }),
    };
  } finally {
    await deleteTopics(kafka, topics);
  }
}

// Run alone: node --import tsx bench/eos.ts [inputs] [maxBatchSize] [commitIntervalMs]
if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await measureEosVsAlo({
    inputs: Number(process.argv[2] ?? 50_000),
    maxBatchSize: Number(process.argv[3] ?? 1000),
    ...(process.argv[4] ? { commitIntervalMs: Number(process.argv[4]) } : {}),
  });
  console.log(`bench: eos ${JSON.stringify(result)}`);
  console.log(
    `eos_vs_alo=${result.ratio}${result.windowedRatio === undefined ? '' : ` eos_window_vs_alo=${result.windowedRatio}`}`,
  );
}
