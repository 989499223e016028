import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { migrate } from '../../src/db/migrate.ts';
import { pgDb } from '../../src/db/pg.ts';
import { loadSql } from '../../src/db/sql.ts';
import { sleep } from '../../src/observability/sleep.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { auditStory } from '../boxoffice/audit.ts';
import { type ChaosConfig, configToEnv } from './config.ts';

export type Role = 'writer' | 'relay' | 'consumer';

export interface ChaosOptions {
  events: number;
  /** Kills spread over the run, alternating relay (the writer for `no-outbox`) and consumer, half at named hops. */
  kills: number;
  /** `effectively`, or a naive twin: `no-dedup` (consumer) or `no-outbox` (writer). */
  mode?: ChaosConfig['mode'];
  /** Orders per second written (default: events / 10 s, at least 500). */
  rate?: number;
  /** Crash points armed in each role's first incarnation (deterministic crash tests). */
  crashAt?: Partial<Record<Role, string>>;
  /** Give up after this long (default 5 minutes). */
  timeoutMs?: number;
  /** Stop once the writer is done and nothing moved for this long (default 15 s): how a naive twin's loss ends. */
  idleMs?: number;
  /** Keep the schema and topic afterwards (default: drop them). */
  keep?: boolean;
  log?: (line: string) => void;
}

export interface ChaosResult {
  events: number;
  kills: number;
  orders: number;
  emails: number;
  lost: number;
  duplicated: number;
  /** Kills per named hop or `random`. */
  killsAt: Record<string, number>;
}

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
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
}

export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const log = options.log ?? (() => undefined);
  const id = randomBytes(4).toString('hex');
  const config: ChaosConfig = {
    schema: `chaos_${id}`,
    topic: `chaos-orders-${id}`,
    group: `chaos-notifications-${id}`,
    events: options.events,
    rate: options.rate ?? Math.max(500, Math.ceil(options.events / 10)),
    mode: options.mode ?? 'effectively',
  };
  const db = pgDb({ max: 2 });
  const transport = kafkaTransport();
  const admin = transport.admin();
  const children = new Map<Role, Child>();
  const killsAt: Record<string, number> = {};
  let kills = 0;
  let finishing = false;
  const firstStart = new Set<Role>();

  function spawnChild(role: Role): void {
    const crashAt = firstStart.has(role) ? undefined : options.crashAt?.[role];
    firstStart.add(role);
    const child = spawn(process.execPath, ['--import', 'tsx', here(`./${role}.ts`)], {
      env: {
        ...process.env,
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
      ...(crashAt ? { lastHop: crashAt } : {}),
      exited: new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal }))),
    };
    const keep = (chunk: Buffer) => {
      const lines = chunk.toString().split('\n').filter(Boolean);
      if (lines.includes('chaos-ready')) entry.ready = true;
      entry.tail.push(...lines);
      entry.tail.splice(0, Math.max(0, entry.tail.length - 30));
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    children.set(role, entry);
    void entry.exited.then(({ code, signal }) => {
      if (children.get(role) !== entry) return;
      if (signal === 'SIGKILL') {
        kills += 1;
        const said = entry.tail.findLast((line) => line.startsWith('chaos-crash-at:'));
        const at = said ? said.slice('chaos-crash-at:'.length) : (entry.lastHop ?? 'random');
        killsAt[at] = (killsAt[at] ?? 0) + 1;
        log(`chaos: killed ${role} (${at}); restarting`);
      } else if (code !== 0 && !finishing) {
        log(`chaos: ${role} exited with ${code ?? signal}; last lines:\n  ${entry.tail.join('\n  ')}`);
      }
      if (finishing || (role === 'writer' && code === 0)) return;
      spawnChild(role);
    });
  }

  const alive = (child: Child) => child.process.exitCode === null && child.process.signalCode === null;

  /** Kills `role`'s child (at its next named hop when `armed`); true once it died of the SIGKILL. */
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

  const measure = () => auditStory(db, config.schema);

  try {
    await migrate(db, { schema: config.schema });
    await db.query(loadSql(import.meta.url, '../boxoffice/schema.sql', config.schema));
    await admin.createTopics([{ topic: config.topic, partitions: 6 }]);
    spawnChild('writer');
    if (config.mode !== 'no-outbox') spawnChild('relay');
    spawnChild('consumer');

    const deadline = Date.now() + (options.timeoutMs ?? 300_000);
    const idleMs = options.idleMs ?? 15_000;
    let killsDone = 0;
    let lastEmails = -1;
    let idleSince = Date.now();
    for (;;) {
      await sleep(250);
      const now = await measure();
      const delivered = now.orders - now.lost;
      // Kill i lands when i/(kills+1) of the events were delivered, alternating relay and consumer.
      const writerFinished = children.get('writer')?.process.exitCode === 0;
      // Kills still owed when the work went quiet (the last events flowed faster than the kills) are done then.
      const owedAtTheEnd = writerFinished && Date.now() - idleSince > idleMs / 3;
      if (
        killsDone < options.kills &&
        (delivered >= ((killsDone + 1) / (options.kills + 1)) * config.events || owedAtTheEnd)
      ) {
        const producerSide: Role = config.mode === 'no-outbox' ? 'writer' : 'relay';
        const preferred: Role = killsDone % 2 === 1 ? 'consumer' : producerSide;
        // A writer that has finished cannot be killed any more: the consumer takes its turn.
        const role: Role = children.get(preferred)?.process.exitCode === 0 ? 'consumer' : preferred;
        // A kill that found no live child (it was just being replaced, or had finished) is tried again.
        if (await kill(role, killsDone % 4 < 2)) killsDone += 1;
      }
      const writerDone = children.get('writer')?.process.exitCode === 0;
      if (now.emails !== lastEmails) {
        lastEmails = now.emails;
        idleSince = Date.now();
      }
      const complete = writerDone && now.orders === config.events && now.lost === 0 && killsDone >= options.kills;
      // No progress for a while, once every kill was done (kills still owed are done first, up to the deadline).
      const stalled = writerDone && Date.now() - idleSince > idleMs && killsDone >= options.kills;
      if (complete || stalled || Date.now() > deadline) {
        if (!complete) log(`chaos: stopping ${stalled ? 'after no progress' : 'at the deadline'}`);
        break;
      }
    }
    // Let redeliveries after the last kill land before the audit.
    await sleep(2000);
    finishing = true;
    for (const child of children.values()) if (alive(child)) child.process.kill('SIGTERM');
    await Promise.all(
      [...children.values()].map((child) =>
        Promise.race([child.exited, sleep(10_000).then(() => child.process.kill('SIGKILL'))]),
      ),
    );
    const final = await measure();
    return { events: config.events, kills, ...final, killsAt };
  } finally {
    finishing = true;
    for (const child of children.values()) if (alive(child)) child.process.kill('SIGKILL');
    if (!options.keep) {
      await db.query(`DROP SCHEMA IF EXISTS ${config.schema} CASCADE`).catch(() => undefined);
      await admin.deleteTopics([config.topic]).catch(() => undefined);
    }
    await admin.close();
    await db.close();
  }
}
