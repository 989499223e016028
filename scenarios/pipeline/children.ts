import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { PipelineFaultPoint, PipelineGuarantee } from '../../src/pipeline/types.ts';
import type { PipelineTopics } from './topics.ts';

const childPath = fileURLToPath(new URL('./child.ts', import.meta.url));

export interface ChildOptions {
  topics: PipelineTopics;
  guarantee: PipelineGuarantee;
  transactionalId: string;
  crashAt?: PipelineFaultPoint;
  stopAt?: PipelineFaultPoint;
  armAtSeq?: number;
  transactionTimeoutMs?: number;
  /** The pipeline's `commitIntervalMs` (0: a transaction per batch) and `maxBatchSize` (default 500). */
  commitIntervalMs?: number | undefined;
  maxBatchSize?: number | undefined;
}

/** A running pipeline child: its output lines as they come, and how it ended. */
export interface Child {
  process: ChildProcess;
  lines: string[];
  /** Resolves with the first line starting with `prefix` (or null if the child exits first). */
  waitFor(prefix: string): Promise<string | null>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startChild(options: ChildOptions): Child {
  const { topics } = options;
  const child = spawn(process.execPath, ['--import', 'tsx', childPath], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      PIPELINE_IN: topics.input,
      PIPELINE_OUT: topics.output,
      PIPELINE_DLT: topics.deadLetter,
      PIPELINE_GROUP: topics.group,
      PIPELINE_TXID: options.transactionalId,
      PIPELINE_GUARANTEE: options.guarantee,
      ...(options.crashAt ? { PIPELINE_CRASH_AT: options.crashAt } : {}),
      ...(options.stopAt ? { PIPELINE_STOP_AT: options.stopAt } : {}),
      ...(options.armAtSeq === undefined ? {} : { PIPELINE_ARM_AT_SEQ: String(options.armAtSeq) }),
      ...(options.transactionTimeoutMs ? { PIPELINE_TXN_TIMEOUT_MS: String(options.transactionTimeoutMs) } : {}),
      ...(options.commitIntervalMs ? { PIPELINE_COMMIT_INTERVAL_MS: String(options.commitIntervalMs) } : {}),
      ...(options.maxBatchSize ? { PIPELINE_BATCH: String(options.maxBatchSize) } : {}),
    },
  });
  const lines: string[] = [];
  const waiters: { prefix: string; resolve: (line: string | null) => void }[] = [];
  let buffered = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      lines.push(line);
      for (const waiter of waiters.filter((w) => line.startsWith(w.prefix))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      for (const waiter of waiters.splice(0)) waiter.resolve(null);
      resolve({ code, signal });
    }),
  );
  return {
    process: child,
    lines,
    exited,
    waitFor(prefix) {
      const found = lines.find((line) => line.startsWith(prefix));
      if (found) return Promise.resolve(found);
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(null);
      return new Promise((resolve) => waiters.push({ prefix, resolve }));
    },
  };
}

/** SIGTERM (a clean close) and wait; SIGKILL if it does not end in time. */
export async function stopChild(child: Child, timeoutMs = 20_000): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  child.process.kill('SIGCONT');
  child.process.kill('SIGTERM');
  const timer = setTimeout(() => child.process.kill('SIGKILL'), timeoutMs);
  await child.exited;
  clearTimeout(timer);
}
