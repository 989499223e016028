import type { PipelineFaultPoint, PipelineGuarantee } from '../../src/pipeline/types.ts';
import { type Audit, audit } from './audit.ts';
import { type Child, startChild, stopChild } from './children.ts';
import { type BigInput, createTopics, deleteTopics, offsetsAtEnd, scenarioKafka, seedInputs } from './topics.ts';

export interface PipelineRunOptions {
  inputs: number;
  partitions: number;
  /** SIGKILLs of the pipeline child, at the crash points in turn, spread over 20 %..80 % of the inputs. */
  kills: number;
  guarantee: PipelineGuarantee;
  timeoutMs: number;
  /**
   * One input of about this many bytes among the others, its output as large, with output and dead-letter topics that
   * allow 1 MiB: the output is refused, so that input must end as a dead letter (without its value) and nothing else.
   */
  bigBytes?: number;
  /** The child's `commitIntervalMs` (0, default: a transaction per batch) and `maxBatchSize`. */
  commitIntervalMs?: number;
  maxBatchSize?: number;
  log?: (line: string) => void;
}

/** The output and dead-letter topics' limit when a big input is seeded. */
const topicLimit = 1024 * 1024;

export interface PipelineRunResult extends Audit {
  kills: number;
  killsAt: Record<string, number>;
  offsetsAtEnd: boolean;
  seconds: number;
}

export const crashPoints: PipelineFaultPoint[] = [
  'pipeline:after-send',
  'pipeline:after-send-offsets',
  'pipeline:during-commit',
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Kafka's own transactions system test, in small: sequence-numbered inputs over several partitions, one pipeline
 * instance killed (SIGKILL) at each crash point in turn and restarted under the same transactional id, then the
 * outputs audited with a read_committed and a read_uncommitted reader.
 */
export async function runPipeline(options: PipelineRunOptions): Promise<PipelineRunResult> {
  const log = options.log ?? (() => undefined);
  const shape = { commitIntervalMs: options.commitIntervalMs, maxBatchSize: options.maxBatchSize };
  const started = Date.now();
  const kafka = scenarioKafka();
  const big: BigInput | undefined = options.bigBytes
    ? { seq: Math.floor(options.inputs / 2), bytes: options.bigBytes }
    : undefined;
  const topics = await createTopics(kafka, options.partitions, big ? { maxMessageBytes: topicLimit } : {});
  try {
    await seedInputs(kafka, topics, options.inputs, big);
    if (big) log(`pipeline: input ${big.seq} is ${big.bytes} bytes; output and dead-letter topics allow ${topicLimit}`);
    log(`pipeline: seeded ${options.inputs} inputs over ${options.partitions} partitions (${topics.input})`);
    const killsAt: Record<string, number> = {};
    let kills = 0;
    const deadline = started + options.timeoutMs;
    const transactionalId = `${topics.group}-0`;
    let child: Child | undefined;
    for (let k = 0; k < options.kills && Date.now() < deadline; k++) {
      const point = crashPoints[k % crashPoints.length]!;
      const armAtSeq = Math.floor(options.inputs * (0.2 + (0.6 * k) / options.kills));
      child = startChild({ ...shape, topics, guarantee: options.guarantee, transactionalId, crashAt: point, armAtSeq });
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), deadline - Date.now());
      });
      const crashed = await Promise.race([child.waitFor('crash-at:'), timedOut]);
      clearTimeout(timer);
      if (!crashed) break;
      await child.exited;
      kills += 1;
      killsAt[point] = (killsAt[point] ?? 0) + 1;
      log(`pipeline: killed at ${point} (armed at seq ${armAtSeq})`);
    }
    child = startChild({ ...shape, topics, guarantee: options.guarantee, transactionalId });
    let atEnd = false;
    while (Date.now() < deadline) {
      const progress = await offsetsAtEnd(kafka, topics);
      if (progress.done) {
        atEnd = true;
        break;
      }
      await sleep(500);
    }
    await stopChild(child);
    const result = await audit(kafka, topics, options.inputs, big ? [big.seq] : []);
    return { ...result, kills, killsAt, offsetsAtEnd: atEnd, seconds: Math.round((Date.now() - started) / 1000) };
  } finally {
    await deleteTopics(kafka, topics);
  }
}

export function resultLine(result: PipelineRunResult): string {
  return (
    `pipeline: inputs=${result.inputs} outputs=${result.outputs} duplicates=${result.duplicates} lost=${result.lost} ` +
    `kills=${result.kills} aborted_seen=${result.abortedSeen}`
  );
}
