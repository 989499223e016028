// The pipeline the exactly-once benches measure: it copies each input to the output topic's same partition, in a
// consumer group of its own (so every pass reads every input), its transactional id derived from the group.
import { randomBytes } from 'node:crypto';
import type { PipelineTopics } from '../scenarios/pipeline/topics.ts';
import { silentLogger } from '../src/observability/logger.ts';
import { createPipeline } from '../src/pipeline/pipeline.ts';
import type { PipelineGuarantee } from '../src/pipeline/types.ts';

export interface CopyPipelineOptions {
  guarantee: PipelineGuarantee;
  /** Exactly-once: one transaction per window of this many ms (default: the library's). */
  commitIntervalMs?: number | undefined;
  maxBatchSize?: number | undefined;
}

/** A copying pipeline over `topics`; `label` names its group (`<topics.group>-<label>-<random>`). */
export function copyPipeline(topics: PipelineTopics, label: string, options: CopyPipelineOptions) {
  const group = `${topics.group}-${label}-${randomBytes(3).toString('hex')}`;
  const pipeline = createPipeline({
    from: topics.input,
    to: topics.output,
    deadLetterTopic: topics.deadLetter,
    group,
    transactionalId: `${group}-0`,
    guarantee: options.guarantee,
    ...(options.maxBatchSize === undefined ? {} : { maxBatchSize: options.maxBatchSize }),
    ...(options.commitIntervalMs === undefined ? {} : { commitIntervalMs: options.commitIntervalMs }),
    logger: silentLogger,
    transform: (record) => ({ partition: record.partition, key: record.key, value: record.value }),
  });
  return { group, pipeline };
}
