// The chaos run's child processes (writer, relay, consumer): spawned, restarted when they die, killed on demand.
import { type ChildProcess, spawn } from 'node:child_process';
import { sleep } from '../../src/observability/sleep.ts';
import { type ChildEntries, throughTsx } from './bundle.ts';
import { type ChaosConfig, configToEnv } from './config.ts';

export type Role = 'writer' | 'relay' | 'consumer';

const armPoints: Record<Role, string> = {
  writer: 'writer:after-save',
  relay: 'relay:after-publish',
  consumer: 'consumer:after-db-commit,consumer:before-db-commit',
};

interface Child {
  role: Role;
  process: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  lastHop?: string | undefined;
  tail: string[];
  /** The child said it is up: its crash switch listens for SIGUSR2 (before that, SIGUSR2 would just end it). */
  ready: boolean;
  frozen: boolean;
  /** When the parent spawned it, and when it said it had loaded its code, was up, and first applied an event. */
  at: { spawned: number; loaded?: number; ready?: number; applied?: number };
  /** It replaces a child the kit killed at this time: its first applied event ends a recovery. */
  recovering?: number | undefined;
}

/** One kill of a role and how long until the process that replaced it applied (consumer) or published (relay). */
export interface Recovery {
  role: Role;
  /** When the killed process died (epoch ms, as the parent saw its exit). */
  killedAt: number;
  /** Seconds from the kill to the successor's first applied event or published row. */
  seconds: number;
  /** Where they went: kill to spawn, spawn to code loaded (node, tsx, imports), loaded to started, started to applied. */
  phases: { respawn: number; load: number; start: number; firstApply: number };
}

export interface Children {
  spawn(role: Role): void;
  /** Kills `role`'s child (at its next named hop when `armed`); true once it died of the SIGKILL. */
  kill(role: Role, armed: boolean): Promise<boolean>;
  /** SIGSTOPs `role`'s child (a test's way to leave work pending where it is; SIGKILLed at the end). */
  freeze(role: Role): void;
  finished(role: Role): boolean;
  /** Stops every child (SIGTERM, then SIGKILL after 10 s): the state the audit reads no longer moves. */
  stopAll(): Promise<void>;
  killAll(): void;
  readonly kills: number;
  /** Exits that were not the kit's kills nor a finished writer: a child that crashed (restarted all the same). */
  readonly crashes: number;
  readonly killsAt: Record<string, number>;
  /** The first time after `t` that `role` said it progressed (applied, published, wrote), if it has. */
  progressAfter(role: Role, t: number): number | undefined;
  /** Every measured recovery (a kill whose successor applied or published something before it was itself killed). */
  readonly recoveries: Recovery[];
  /** Kills whose successor was killed (or the run ended) before it applied anything: no recovery measured. */
  readonly unmeasured: number;
}

const alive = (child: Child) => child.process.exitCode === null && child.process.signalCode === null;

export function chaosChildren(
  config: ChaosConfig,
  options: {
    crashAt?: Partial<Record<Role, string>>;
    env?: Record<string, string>;
    /** Environment of one role only, over `env` (its own DATABASE_URL and KAFKA_BROKERS through its fault proxies). */
    roleEnv?: Partial<Record<Role, Record<string, string>>>;
    /** How each role is started (default through tsx; the run bundles them first: see bundle.ts). */
    entries?: ChildEntries;
    log: (line: string) => void;
  },
): Children {
  const { log } = options;
  const children = new Map<Role, Child>();
  const killsAt: Record<string, number> = {};
  const firstStart = new Set<Role>();
  const recoveries: Recovery[] = [];
  /** When each role said it progressed (applied, published, wrote), most recent last. */
  const progress = new Map<Role, number[]>();
  let unmeasured = 0;
  let kills = 0;
  let crashes = 0;
  let finishing = false;

  function mark(entry: Child, line: string): void {
    const now = Date.now();
    if (line === 'chaos-loaded') entry.at.loaded ??= now;
    else if (line === 'chaos-ready') {
      entry.ready = true;
      entry.at.ready ??= now;
    }
    if (line === 'chaos-applied' || line === 'chaos-progress') {
      const seen = progress.get(entry.role) ?? [];
      seen.push(now);
      seen.splice(0, Math.max(0, seen.length - 5000));
      progress.set(entry.role, seen);
    }
    if (line === 'chaos-applied' && entry.at.applied === undefined) {
      entry.at.applied = now;
      if (entry.recovering === undefined) return;
      const { spawned, loaded = spawned, ready = loaded } = entry.at;
      const s = (ms: number) => ms / 1000;
      recoveries.push({
        role: entry.role,
        killedAt: entry.recovering,
        seconds: s(now - entry.recovering),
        phases: {
          respawn: s(spawned - entry.recovering),
          load: s(loaded - spawned),
          start: s(ready - loaded),
          firstApply: s(now - ready),
        },
      });
      entry.recovering = undefined;
    }
  }

  function spawnChild(role: Role, recovering?: number): void {
    const crashAt = firstStart.has(role) ? undefined : options.crashAt?.[role];
    firstStart.add(role);
    const child = spawn(process.execPath, (options.entries ?? throughTsx).args(role), {
      env: {
        ...process.env,
        ...options.env,
        ...options.roleEnv?.[role],
        ...configToEnv(config),
        CHAOS_ARM_POINTS: armPoints[role],
        ...(crashAt ? { CHAOS_CRASH_AT: crashAt } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const entry: Child = {
      role,
      process: child,
      tail: [],
      ready: false,
      frozen: false,
      at: { spawned: Date.now() },
      recovering,
      ...(crashAt ? { lastHop: crashAt } : {}),
      exited: new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal }))),
    };
    const keep = (chunk: Buffer) => {
      const lines = chunk.toString().split('\n').filter(Boolean);
      for (const line of lines) if (line.startsWith('chaos-')) mark(entry, line);
      entry.tail.push(...lines.filter((line) => line !== 'chaos-progress'));
      entry.tail.splice(0, Math.max(0, entry.tail.length - 30));
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    children.set(role, entry);
    void entry.exited.then(({ code, signal }) => {
      if (children.get(role) !== entry) return;
      const killedAt = Date.now();
      if (entry.recovering !== undefined) unmeasured += 1;
      if (signal === 'SIGKILL' && !finishing) {
        kills += 1;
        const said = entry.tail.findLast((line) => line.startsWith('chaos-crash-at:'));
        const at = said ? said.slice('chaos-crash-at:'.length) : (entry.lastHop ?? 'random');
        killsAt[at] = (killsAt[at] ?? 0) + 1;
        log(`chaos: killed ${role} (${at}); restarting`);
      } else if (code !== 0 && !finishing) {
        crashes += 1;
        log(`chaos: ${role} exited with ${code ?? signal}; last lines:\n  ${entry.tail.join('\n  ')}`);
      }
      if (finishing || (role === 'writer' && code === 0)) return;
      spawnChild(role, signal === 'SIGKILL' && role !== 'writer' ? killedAt : undefined);
    });
  }

  async function kill(role: Role, armed: boolean): Promise<boolean> {
    let child = children.get(role);
    // A child that just died is being replaced: aim at its successor (a finished writer is not replaced).
    for (let i = 0; child && !alive(child) && child.process.exitCode !== 0 && i < 200; i++) {
      await sleep(50);
      child = children.get(role);
    }
    if (!child || !alive(child)) return false;
    if (armed) {
      const deadline = Date.now() + 15_000;
      while (!child.ready && alive(child) && Date.now() < deadline) await sleep(50);
    }
    if (armed && child.ready && alive(child)) {
      // The child kills itself at the next named hop it reaches; if it reaches none soon, it is killed where it is.
      child.lastHop = 'armed';
      child.process.kill('SIGUSR2');
      const died = await Promise.race([child.exited.then(() => true), sleep(3000).then(() => false)]);
      if (died) return (await child.exited).signal === 'SIGKILL';
      child.lastHop = undefined;
    }
    if (!alive(child)) return false;
    child.process.kill('SIGKILL');
    return (await child.exited).signal === 'SIGKILL';
  }

  return {
    spawn: spawnChild,
    kill,
    freeze(role) {
      const child = children.get(role);
      if (child && alive(child) && !child.frozen) {
        child.frozen = true;
        child.process.kill('SIGSTOP');
      }
    },
    finished: (role) => children.get(role)?.process.exitCode === 0,
    async stopAll() {
      finishing = true;
      for (const child of children.values()) {
        if (!alive(child)) continue;
        // A frozen child is killed where it stands: woken, it would carry on with the work it was frozen in.
        child.process.kill(child.frozen ? 'SIGKILL' : 'SIGTERM');
      }
      await Promise.all(
        [...children.values()].map((child) =>
          Promise.race([child.exited, sleep(10_000).then(() => alive(child) && child.process.kill('SIGKILL'))]),
        ),
      );
    },
    killAll() {
      finishing = true;
      for (const child of children.values()) if (alive(child)) child.process.kill('SIGKILL');
    },
    get kills() {
      return kills;
    },
    get crashes() {
      return crashes;
    },
    recoveries,
    get unmeasured() {
      // A successor still alive and waiting for its first event counts too.
      return (
        unmeasured + [...children.values()].filter((child) => alive(child) && child.recovering !== undefined).length
      );
    },
    killsAt,
    progressAfter: (role, t) => progress.get(role)?.find((at) => at > t),
  };
}
