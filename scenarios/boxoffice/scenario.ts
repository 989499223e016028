// One run of a boxoffice scenario: the services under a supervisor that restarts what crashes, the load generator with
// its faults, one poison order, planned crashes at the library's hops; then the audit, counted from the services'
// own tables, as one line: `<scenario>: orders=N emails=E charges=C refunds=R seats_ok=yes duplicates=0 lost=0`.

import type { Show } from '../../examples/boxoffice/inventory/index.ts';
import { type BoxofficeOptions, defaultShows, prepareBoxoffice } from '../../examples/boxoffice/system.ts';
import { type EmailProvider, startEmailProvider } from '../../examples/email-provider/server.ts';
import { type PaymentProvider, startPaymentProvider } from '../../examples/payment-provider/server.ts';
import type { Db } from '../../src/db/port.ts';
import { createTimeline, type Timeline } from '../report/timeline.ts';
import { type ReportVariant, writeReport } from '../report/write.ts';
import { openEnvironment, type TransportName } from './environment.ts';
import { generateLoad, type LoadResult, sendPoisonOrder } from './load.ts';
import { auditProviders, type ProviderAudit } from './provider-audit.ts';
import { type PlannedCrash, type Supervisor, superviseBoxoffice } from './supervisor.ts';
import { auditSystem, type SystemAudit, settled } from './system-audit.ts';

export interface ScenarioOptions {
  scenario: string;
  transport: TransportName;
  orders: number;
  /** Shows on sale (default: the boxoffice's three); a small one sells out, and its late orders are refused. */
  shows?: Show[];
  /** Crashes, spread evenly over the orders placed. */
  crashes: PlannedCrash[];
  lostAnswers?: number;
  cancelEvery?: number;
  /** E-mails per second the provider allows (default 200), and payment calls (default 200). */
  emailRate?: number;
  paymentRate?: number;
  /** Provider faults, each applied once its share (0..1) of the orders is placed. */
  providerFaults?: ProviderFault[];
  /** After the load, how long nothing may move before the run ends with what it has (default 30 s). */
  stallMs?: number;
  /** The order service's Idempotency-Key rows (default true; false: the naive twin, a resent request orders again). */
  idempotencyKeys?: boolean;
  /** The order service cancels refused orders (default true; false: the naive twin, a refused order stays charged). */
  cancelRefused?: boolean;
  /** Embedded: run in this database (a schema of the run's own) instead of a new PGlite. */
  embeddedDb?: Db;
  /** Other runs to show in the report beside this one (the naive build's, in `npm start`). */
  otherVariants?: ReportVariant[];
  /** Write reports/<scenario>-<time>.html (default true). */
  report?: boolean;
  log?: (line: string) => void;
}

export interface Providers {
  email: EmailProvider;
  payment: PaymentProvider;
}

export interface ProviderFault {
  at: number;
  label: string;
  apply(providers: Providers): void;
}

export interface ScenarioResult {
  line: string;
  ok: boolean;
  audit: SystemAudit;
  providers: ProviderAudit;
  /** The most e-mail provider calls seen in one second, and the limit the notification service keeps. */
  maxCallsPerSecond: number;
  emailRate: number;
  /** Seconds from the poison order's first dead letter to the first alert after it (undefined: none came). */
  alertAfterS: number | undefined;
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

/** Arms each crash once its share of the first 80% of the orders is placed. */
function crashPlan(options: ScenarioOptions, arm: (crash: PlannedCrash) => void, timeline: Timeline) {
  let next = 0;
  return (placed: number) => {
    const { crashes, orders } = options;
    while (next < crashes.length && placed >= ((next + 1) / (crashes.length + 1)) * orders * 0.8) {
      const crash = crashes[next++]!;
      timeline.mark(`${crash.service === 'any' ? 'relay' : crash.service} crash`);
      arm(crash);
    }
  };
}

const fast = {
  callTimeoutMs: 1000,
  leaseMs: 5000,
  pollIntervalMs: 50,
  retry: { baseMs: 100, capMs: 1000 },
  maxAttempts: 60,
};

function serviceOptions(options: ScenarioOptions, providers: Providers, onAlert: () => void): BoxofficeOptions {
  return {
    shows: options.shows ?? defaultShows,
    order: { idempotencyKeys: options.idempotencyKeys ?? true, cancelRefused: options.cancelRefused ?? true },
    notification: {
      emailUrl: providers.email.url,
      ratePerSecond: options.emailRate ?? 200,
      breaker: { failureRatio: 0.5, minimumCalls: 10, openMs: 1000 },
      sender: fast,
    },
    payment: { providerUrl: providers.payment.url, ratePerSecond: options.paymentRate ?? 200, sender: fast },
    alerting: { everyMs: 500, onAlert },
  };
}

/** The e-mail sender's breaker, from the notification service's metrics. */
async function breakerState(supervisor: Supervisor): Promise<string | undefined> {
  const service = supervisor.current('notification') as { metrics?: () => Promise<{ breaker_state: string }> };
  return (await service?.metrics?.())?.breaker_state;
}

/** Samples the system into the report's timeline: orders applied, lag, dead letters, provider calls and refusals. */
function sampleInto(
  timeline: Timeline,
  read: () => Promise<SystemAudit>,
  providers: Providers,
  emailRate: number,
  supervisor: Supervisor,
) {
  timeline.sampleEvery(250, async () => {
    const state = await breakerState(supervisor);
    if (state !== undefined) timeline.gauge('breaker', state);
  });
  const rate = { max: 0, calls: 0, at: Date.now() };
  timeline.sampleEvery(1000, () => {
    const now = Date.now();
    const perSecond = ((providers.email.requests - rate.calls) * 1000) / Math.max(1000, now - rate.at);
    rate.max = Math.max(rate.max, Math.round(perSecond));
    Object.assign(rate, { calls: providers.email.requests, at: now });
  });
  let decided = 0;
  let calls = 0;
  let refused = 0;
  timeline.limit('provider calls', emailRate);
  timeline.sampleEvery(500, async () => {
    const a = await read();
    timeline.count('applied', Math.max(0, a.orders - a.unheld - decided));
    decided = a.orders - a.unheld;
    timeline.gauge('lag', a.unheld + a.pending);
    timeline.gauge('dead letters', a.poisoned + a.otherDead);
    const { requests, sends, replays } = providers.email;
    timeline.count('provider calls', requests - calls);
    timeline.count('retries', requests - sends - replays - refused);
    calls = requests;
    refused = requests - sends - replays;
  });
  return rate;
}

/**
 * Waits until everything is done, or nothing moved for `stallMs` (then what is missing is counted: it would not
 * come). Progress is any change of the counts: e-mails, charges and refunds still draining at the providers' limits
 * are waited for, however long.
 */
async function settle(read: () => Promise<[SystemAudit, ProviderAudit]>, crashed: () => boolean, stallMs: number) {
  let last = '';
  let movedAt = Date.now();
  for (;;) {
    const [system, providers] = await read();
    if (settled(system) && system.poisoned > 0 && providers.lost === 0 && crashed()) return;
    const now = JSON.stringify([system, providers]);
    if (now !== last) [last, movedAt] = [now, Date.now()];
    if (Date.now() - movedAt > stallMs) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export async function runScenario(options: ScenarioOptions): Promise<ScenarioResult> {
  const started = Date.now();
  const log = options.log ?? (() => undefined);
  const env = await openEnvironment(options.transport, options.scenario, options.embeddedDb);
  const { db, schema } = env.deps;
  const providers: Providers = { email: await startEmailProvider(), payment: await startPaymentProvider() };
  const timeline = createTimeline();
  log(`${options.scenario}: ${env.describe}`);
  try {
    const alerts: number[] = [];
    const onAlert = () => {
      timeline.mark('alert');
      alerts.push(Date.now());
    };
    await prepareBoxoffice(env.deps);
    const supervisor = await superviseBoxoffice(env.deps, serviceOptions(options, providers, onAlert));
    log(`${options.scenario}: services started in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    let poisonKey = '';
    const read1 = () => auditSystem(db, schema, poisonKey);
    const rate = sampleInto(timeline, read1, providers, options.emailRate ?? 200, supervisor);
    const plan = crashPlan(options, (crash) => supervisor.arm(crash), timeline);
    const faults = [...(options.providerFaults ?? [])];
    const load = await generateLoad({
      url: () => supervisor.orderUrl,
      orders: options.orders,
      shows: options.shows ?? defaultShows,
      ...(options.lostAnswers === undefined ? {} : { lostAnswers: options.lostAnswers }),
      ...(options.cancelEvery === undefined ? {} : { cancelEvery: options.cancelEvery }),
      onPlaced: async (placed) => {
        plan(placed);
        while (faults[0] && placed >= faults[0].at * options.orders) {
          const fault = faults.shift()!;
          fault.apply(providers);
          timeline.mark(fault.label);
        }
        if (placed === Math.ceil(options.orders / 2)) {
          poisonKey = await sendPoisonOrder(env.deps.transport);
          timeline.mark('poison order');
        }
      },
    });
    const elapsed = ((Date.now() - started) / 1000).toFixed(1);
    log(
      `${options.scenario}: ${load.placed} orders placed (${load.cancelled} cancelled, ${load.resent} sent again), ${elapsed} s`,
    );
    const read = async () =>
      [
        await auditSystem(db, schema, poisonKey),
        await auditProviders(db, schema, providers.email, providers.payment),
      ] as [SystemAudit, ProviderAudit];
    await settle(read, () => supervisor.missed.length === 0, options.stallMs ?? 30_000);
    await timeline.stop();
    await supervisor.close();
    const [audit, paid] = await read();
    const maxCallsPerSecond = rate.max;
    const alertAfterS = await alertDelay(db, schema, poisonKey, alerts);
    return await finish(options, { audit, paid, load, supervisor, timeline, started, alertAfterS, maxCallsPerSecond });
  } finally {
    await timeline.stop();
    await providers.email.close();
    await providers.payment.close();
    await env.close();
  }
}

/** From the poison order's first dead letter (the database's clock, this machine's) to the first alert after it. */
async function alertDelay(db: Db, schema: string, poisonKey: string, alerts: number[]): Promise<number | undefined> {
  const { rows } = await db.query<{ at: string | null }>(
    `SELECT extract(epoch FROM min(last_failed_at)) * 1000 AS at FROM ${schema}.dead_letters WHERE key = $1`,
    [poisonKey],
  );
  const deadAt = Number(rows[0]?.at ?? Number.NaN);
  const alertAt = alerts.find((at) => at >= deadAt - 1000); // the clocks' rounding
  return Number.isNaN(deadAt) || alertAt === undefined ? undefined : Math.max(0, alertAt - deadAt) / 1000;
}

async function finish(
  options: ScenarioOptions,
  run: {
    audit: SystemAudit;
    paid: ProviderAudit;
    load: LoadResult;
    supervisor: { crashes: string[]; missed: string[] };
    timeline: Timeline;
    started: number;
    alertAfterS: number | undefined;
    maxCallsPerSecond: number;
  },
): Promise<ScenarioResult> {
  const { audit, paid, load, supervisor } = run;
  const counts: Counts = {
    orders: audit.orders,
    emails: paid.emails,
    charges: paid.charges,
    refunds: paid.refunds,
    seatsOk: audit.showsWrong === 0 && audit.searchBehind === 0,
    duplicates: Math.max(0, audit.orders - load.placed) + paid.duplicates,
    lost:
      audit.unheld +
      audit.unreleased +
      audit.uncompensated +
      audit.otherDead +
      Math.max(0, load.placed - audit.orders) +
      paid.lost,
  };
  const line = auditLine(options.scenario, counts);
  const alerted = run.alertAfterS !== undefined && run.alertAfterS <= 10;
  const emailRate = options.emailRate ?? 200;
  // one-second samples of a token bucket's calls: its burst may land in one sample
  const withinLimit = run.maxCallsPerSecond <= emailRate * 1.25;
  const ok =
    counts.seatsOk &&
    counts.duplicates === 0 &&
    counts.lost === 0 &&
    audit.poisoned > 0 &&
    alerted &&
    withinLimit &&
    supervisor.missed.length === 0;
  const result: ScenarioResult = {
    line,
    ok,
    audit,
    providers: paid,
    alertAfterS: run.alertAfterS,
    maxCallsPerSecond: run.maxCallsPerSecond,
    emailRate,
    load,
    crashes: supervisor.crashes,
    missed: supervisor.missed,
    seconds: (Date.now() - run.started) / 1000,
  };
  if (options.report ?? true) {
    result.report = await writeReport({
      scenario: options.scenario,
      auditLine: line,
      startedAt: run.started,
      variants: [...(options.otherVariants ?? []), { name: 'effectively', timeline: run.timeline, auditLine: line }],
      facts: {
        transport: options.transport,
        orders: options.orders,
        crashes: supervisor.crashes.join(', ') || 'none',
        'e-mail calls, most in one second': `${run.maxCallsPerSecond} (limit ${emailRate}/s)`,
        'poison order alerted after': run.alertAfterS === undefined ? 'no alert' : `${run.alertAfterS.toFixed(1)} s`,
      },
    });
  }
  return result;
}
