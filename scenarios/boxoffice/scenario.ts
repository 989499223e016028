// One run of a boxoffice scenario: the services under a supervisor that restarts what crashes, the load generator with
// its faults, one poison order, planned crashes at the library's hops; then the audit, counted from the services'
// own tables, as one line: `<scenario>: orders=N emails=E charges=C refunds=R seats_ok=yes duplicates=0 lost=0`.
import { defaultShows, prepareBoxoffice } from '../../examples/boxoffice/system.ts';
import { createTimeline, type Timeline } from '../report/timeline.ts';
import { writeReport } from '../report/write.ts';
import { openEnvironment, type TransportName } from './environment.ts';
import { generateLoad, type LoadResult, sendPoisonOrder } from './load.ts';
import { type PlannedCrash, superviseBoxoffice } from './supervisor.ts';
import { auditSystem, type SystemAudit, settled } from './system-audit.ts';

export interface ScenarioOptions {
  scenario: string;
  transport: TransportName;
  orders: number;
  /** Crashes, spread evenly over the orders placed. */
  crashes: PlannedCrash[];
  lostAnswers?: number;
  cancelEvery?: number;
  /** Longest wait for the system to settle after the load (default 60 s). */
  settleTimeoutMs?: number;
  /** Write reports/<scenario>-<time>.html (default true). */
  report?: boolean;
  log?: (line: string) => void;
}

export interface ScenarioResult {
  line: string;
  ok: boolean;
  audit: SystemAudit;
  load: LoadResult;
  crashes: string[];
  missed: string[];
  report?: string;
  seconds: number;
}

export interface Counts {
  orders: number;
  emails: number;
  charges: number;
  refunds: number;
  seatsOk: boolean;
  duplicates: number;
  lost: number;
}

export const auditLine = (scenario: string, c: Counts) =>
  `${scenario}: orders=${c.orders} emails=${c.emails} charges=${c.charges} refunds=${c.refunds} ` +
  `seats_ok=${c.seatsOk ? 'yes' : 'no'} duplicates=${c.duplicates} lost=${c.lost}`;

/** Arms each crash once its share of the orders is placed, one at a time. */
function crashPlan(options: ScenarioOptions, arm: (crash: PlannedCrash) => Promise<void>, timeline: Timeline) {
  let placed = 0;
  let next = 0;
  let running: Promise<void> = Promise.resolve();
  return {
    placed(count: number) {
      placed = count;
      const { crashes, orders } = options;
      while (next < crashes.length && placed >= ((next + 1) / (crashes.length + 1)) * orders) {
        const crash = crashes[next++]!;
        running = running.then(() => {
          timeline.mark(`${crash.service} crash`);
          return arm(crash);
        });
      }
    },
    done: () => running,
  };
}

export async function runScenario(options: ScenarioOptions): Promise<ScenarioResult> {
  const started = Date.now();
  const log = options.log ?? (() => undefined);
  const env = await openEnvironment(options.transport, options.scenario);
  const { db, schema } = env.deps;
  const timeline = createTimeline();
  log(`${options.scenario}: ${env.describe}`);
  try {
    await prepareBoxoffice(env.deps);
    const supervisor = await superviseBoxoffice(env.deps, { shows: defaultShows });
    log(`${options.scenario}: services started in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    let poisonKey = '';
    let decided = 0;
    timeline.sampleEvery(500, async () => {
      const a = await auditSystem(db, schema, poisonKey);
      timeline.count('applied', Math.max(0, a.orders - a.unheld - decided));
      decided = a.orders - a.unheld;
      timeline.gauge('lag', a.unheld + a.pending);
      timeline.gauge('dead letters', a.poisoned + a.otherDead);
    });
    const plan = crashPlan(options, (crash) => supervisor.arm(crash), timeline);
    const load = await generateLoad({
      url: () => supervisor.orderUrl,
      orders: options.orders,
      shows: defaultShows,
      ...(options.lostAnswers === undefined ? {} : { lostAnswers: options.lostAnswers }),
      ...(options.cancelEvery === undefined ? {} : { cancelEvery: options.cancelEvery }),
      onPlaced: async (placed) => {
        plan.placed(placed);
        if (placed === Math.ceil(options.orders / 2)) {
          poisonKey = await sendPoisonOrder(env.deps.transport);
          timeline.mark('poison order');
        }
      },
    });
    await plan.done();
    log(
      `${options.scenario}: ${load.placed} orders placed (${load.cancelled} cancelled, ${load.resent} requests sent again) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    let audit = await auditSystem(db, schema, poisonKey);
    const deadline = Date.now() + (options.settleTimeoutMs ?? 60_000);
    while (!(settled(audit) && audit.poisoned > 0) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      audit = await auditSystem(db, schema, poisonKey);
    }
    await timeline.stop();
    await supervisor.close();
    audit = await auditSystem(db, schema, poisonKey);
    const counts: Counts = {
      orders: audit.orders,
      emails: 0,
      charges: 0,
      refunds: 0,
      seatsOk: audit.showsWrong === 0 && audit.searchBehind === 0,
      duplicates: Math.max(0, audit.orders - load.placed),
      lost: audit.unheld + audit.unreleased + audit.otherDead + Math.max(0, load.placed - audit.orders),
    };
    const line = auditLine(options.scenario, counts);
    const ok =
      counts.seatsOk &&
      counts.duplicates === 0 &&
      counts.lost === 0 &&
      audit.poisoned > 0 &&
      supervisor.missed.length === 0;
    const result: ScenarioResult = {
      line,
      ok,
      audit,
      load,
      crashes: supervisor.crashes,
      missed: supervisor.missed,
      seconds: (Date.now() - started) / 1000,
    };
    if (options.report ?? true) {
      result.report = await writeReport({
        scenario: options.scenario,
        auditLine: line,
        startedAt: started,
        variants: [{ name: 'effectively', timeline }],
        facts: {
          transport: options.transport,
          orders: options.orders,
          crashes: supervisor.crashes.join(', ') || 'none',
        },
      });
    }
    return result;
  } finally {
    await timeline.stop();
    await env.close();
  }
}
