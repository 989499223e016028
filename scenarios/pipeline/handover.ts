import type { PipelineFaultPoint, PipelineGuarantee } from '../../src/pipeline/types.ts';
import { type Audit, audit } from './audit.ts';
import { type Child, startChild, stopChild } from './children.ts';
import { createTopics, deleteTopics, offsetsAtEnd, scenarioKafka, seedInputs } from './topics.ts';

export interface HandoverOptions {
  inputs: number;
  partitions: number;
  guarantee: PipelineGuarantee;
  crashAt: PipelineFaultPoint;
  timeoutMs: number;
  /** The children's `commitIntervalMs` (0, default: a transaction per batch) and `maxBatchSize`. */
  commitIntervalMs?: number;
  maxBatchSize?: number;
}

export interface HandoverResult extends Audit {
  killed: boolean;
  offsetsAtEnd: boolean;
  /** From the kill to the group's offsets at the inputs' end. */
  handoverSeconds: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Two instances (different transactional ids) of one group; the first is SIGKILLed at a crash point after 20 % of the
 * work and never comes back. The second, started then, takes the partitions once the dead one's session ends; offsets the dead one left
 * pending in its open transaction hold the new owner back until the broker aborts that transaction
 * (`transactionTimeoutMs`), so nothing is processed twice.
 */
export async function runHandover(options: HandoverOptions): Promise<HandoverResult> {
  const deadline = Date.now() + options.timeoutMs;
  const kafka = scenarioKafka();
  const topics = await createTopics(kafka, options.partitions);
  const children: Child[] = [];
  try {
    await seedInputs(kafka, topics, options.inputs);
    const common = {
      topics,
      guarantee: options.guarantee,
      commitIntervalMs: options.commitIntervalMs,
      maxBatchSize: options.maxBatchSize,
    };
    const victim = startChild({
      ...common,
      transactionalId: `${topics.group}-a`,
      crashAt: options.crashAt,
      armAtSeq: Math.floor(options.inputs * 0.2),
    });
    children.push(victim);
    // The other instance starts once the victim is dead: started together, it could take every partition and do all
    // the work before the victim joined, and the victim would never reach its crash point (a run hung on that).
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), Math.max(0, deadline - Date.now()));
    });
    const crashed = await Promise.race([victim.waitFor('crash-at:'), late]);
    clearTimeout(timer);
    const killed = crashed !== null;
    const killedAt = Date.now();
    if (killed) children.push(startChild({ ...common, transactionalId: `${topics.group}-b` }));
    let atEnd = false;
    while (!atEnd && Date.now() < deadline) {
      atEnd = (await offsetsAtEnd(kafka, topics)).done;
      if (!atEnd) await sleep(500);
    }
    const handoverSeconds = Math.round((Date.now() - killedAt) / 1000);
    await Promise.all(children.map((child) => stopChild(child)));
    return { ...(await audit(kafka, topics, options.inputs)), killed, offsetsAtEnd: atEnd, handoverSeconds };
  } finally {
    await Promise.all(children.map((child) => stopChild(child)));
    await deleteTopics(kafka, topics);
  }
}
