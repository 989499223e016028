import type { PipelineGuarantee } from '../../src/pipeline/types.ts';
import { type Audit, audit } from './audit.ts';
import { type Child, startChild, stopChild } from './children.ts';
import { createTopics, deleteTopics, offsetsAtEnd, scenarioKafka, seedInputs } from './topics.ts';

export interface ZombieOptions {
  inputs: number;
  partitions: number;
  guarantee: PipelineGuarantee;
  timeoutMs: number;
  /** The children's `commitIntervalMs` (0, default: a transaction per batch) and `maxBatchSize`. */
  commitIntervalMs?: number;
  maxBatchSize?: number;
}

export interface ZombieResult extends Audit {
  /** The zombie's first failure line after SIGCONT (`failure:<action>:<code>:<step>`), or null. */
  zombieFailure: string | null;
  /** The zombie's stats when it closed (`closed:{...}`), or null. */
  zombieClosed: string | null;
  offsetsAtEnd: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function untilAtEnd(
  kafka: ReturnType<typeof scenarioKafka>,
  topics: Parameters<typeof offsetsAtEnd>[1],
  deadline: number,
) {
  while (Date.now() < deadline) {
    if ((await offsetsAtEnd(kafka, topics)).done) return true;
    await sleep(500);
  }
  return false;
}

/**
 * A zombie: instance A stops itself (SIGSTOP) with a transaction open (outputs sent, offsets not yet added), stays
 * stopped past its session timeout, instance B takes the partitions over and finishes the work; then A is
 * continued (SIGCONT). A's transaction must not commit: the group's generation it carries is gone.
 */
export async function runZombie(options: ZombieOptions): Promise<ZombieResult> {
  const deadline = Date.now() + options.timeoutMs;
  const kafka = scenarioKafka();
  const topics = await createTopics(kafka, options.partitions);
  try {
    await seedInputs(kafka, topics, options.inputs);
    const shape = { commitIntervalMs: options.commitIntervalMs, maxBatchSize: options.maxBatchSize };
    const zombie = startChild({
      ...shape,
      topics,
      guarantee: options.guarantee,
      transactionalId: `${topics.group}-a`,
      stopAt: 'pipeline:after-send',
      armAtSeq: Math.floor(options.inputs * 0.2),
    });
    let successor: Child | undefined;
    try {
      // A alone first, so it has every partition when it stops; B joins then, and the rebalance that gives B the
      // partitions waits for A's session (6 s) to end.
      const stopped = await zombie.waitFor('stop-at:');
      if (!stopped) throw new Error(`the zombie never reached its stop point: ${zombie.lines.join(' | ')}`);
      successor = startChild({ ...shape, topics, guarantee: options.guarantee, transactionalId: `${topics.group}-b` });
      const handedOver = await untilAtEnd(kafka, topics, deadline);
      zombie.process.kill('SIGCONT');
      let timer: NodeJS.Timeout | undefined;
      const quiet = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), options.guarantee === 'exactly-once' ? 15_000 : 3000);
      });
      const failure = await Promise.race([zombie.waitFor('failure:'), quiet]);
      clearTimeout(timer);
      const atEnd = handedOver && (await untilAtEnd(kafka, topics, deadline));
      await Promise.all([stopChild(zombie), stopChild(successor)]);
      const result = await audit(kafka, topics, options.inputs);
      return {
        ...result,
        zombieFailure: failure,
        zombieClosed: zombie.lines.find((line) => line.startsWith('closed:')) ?? null,
        offsetsAtEnd: atEnd,
      };
    } finally {
      await Promise.all([stopChild(zombie), successor && stopChild(successor)]);
    }
  } finally {
    await deleteTopics(kafka, topics);
  }
}
