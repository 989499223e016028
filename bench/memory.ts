// memory: the batch consumer alone in a child process over a long run, so the RSS is the consumer's own. The child
// runs the way a service runs the library: compiled JavaScript under plain node (bundled here), not through the
// TypeScript loader, whose transform cache and ~100 transformed modules cost 50-70 MB of RSS of their own.
// Two runs over the same records, each its own group: node's defaults, and the memory-bounded profile of
// docs/kafka.md "Memory" (V8's heap capped by flags); their rates give the profile's cost.
import { execFileSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { bundleModules } from '../scenarios/chaos/bundle.ts';
import { round } from './support.ts';

/** The process flags of the memory-bounded profile (docs/kafka.md "Memory"). */
export const boundedNodeFlags = ['--max-old-space-size=192', '--max-semi-space-size=8'];

interface MemoryRun {
  eps: number;
  rss: { start: number; peak: number; end: number; heap_at_peak: number };
}

export async function memoryRuns(
  options: { topic: string; group: string; events: number },
  /** A fresh migrated schema for one run, so the second run does not write into tables the first one grew. */
  freshSchema: (suffix: string) => Promise<string>,
  log: (line: string) => void,
) {
  const entry = fileURLToPath(new URL('./memory-child.ts', import.meta.url));
  const child = await bundleModules({ 'memory-child': entry }, 'effectively-bench')
    .then((dir) => ({ args: [`${dir}/memory-child.mjs`], cleanup: () => rm(dir, { recursive: true, force: true }) }))
    .catch((error: Error) => {
      log(`memory child runs through tsx (bundling failed: ${error.message})`);
      return { args: ['--import', 'tsx', entry], cleanup: async () => undefined };
    });
  const run = async (flags: string[], profile: string): Promise<MemoryRun> => {
    const schema = await freshSchema(profile);
    return JSON.parse(
      execFileSync(process.execPath, [...flags, ...child.args], {
        env: {
          ...process.env,
          BENCH_SCHEMA: schema,
          BENCH_TOPIC: options.topic,
          BENCH_GROUP: `${options.group}-${profile}`,
          BENCH_EVENTS: String(options.events),
        },
        encoding: 'utf8',
        maxBuffer: 16 * 1024 * 1024,
      })
        .trim()
        .split('\n')
        .at(-1)!,
    ) as MemoryRun;
  };
  try {
    const bounded = await run(boundedNodeFlags, 'bounded');
    const defaults = await run([], 'default');
    return {
      runtime: child.args.includes('tsx') ? 'tsx' : 'node (bundled)',
      events: options.events,
      default: defaults,
      bounded: { node_flags: boundedNodeFlags.join(' '), ...bounded },
      bounded_eps_vs_default: round(bounded.eps / defaults.eps),
    };
  } finally {
    await child.cleanup();
  }
}
