import { randomBytes } from 'node:crypto';
import { migrate } from '../../src/db/migrate.ts';
import { pgDb } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';
import { loadSql } from '../../src/db/sql.ts';
import { sleep } from '../../src/observability/sleep.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { auditStory } from '../boxoffice/audit.ts';
import { type BrokerSetup, killBrokerForGood, readyBrokers, restartBroker, stopBrokers } from './brokers.ts';
import { childEntries } from './bundle.ts';
import { chaosChildren, type Recovery, type Role } from './children.ts';
import type { ChaosConfig } from './config.ts';
import { defaultTimeoutMs } from './ending.ts';
import { locateMissing } from './locate.ts';
import { type ChaosNetwork, chaosNetwork, type NetFault } from './net-faults.ts';
import { type PrivatePostgres, startPrivatePostgres } from './private-postgres.ts';
import { progressCounter } from './progress.ts';
import { untilUp } from './retry.ts';
import { dropWal } from './wal.ts';

export type { BrokerSetup } from './brokers.ts';
export type { Recovery, Role } from './children.ts';

export interface ChaosOptions {
  events: number;
  /** Kills spread over the run, alternating relay (the writer for `no-outbox`) and consumer, half at named hops. */
  kills: number;
  /** SIGKILL the Kafka broker and start it again this many times, spread over the run. */
  restartBroker?: number;
  /** Restart PostgreSQL (fast shutdown, down `postgresDownMs`, start) this many times; on the private cluster. */
  restartPostgres?: number;
  /** How long PostgreSQL stays down at each restart (default 2 s). */
  postgresDownMs?: number;
  /** Run on the private cluster (scripts/postgres.sh) even without PostgreSQL restarts. */
  privatePostgres?: boolean;
  /** The private cluster's home (PG_HOME_DIR; default the checkout's): a test gives its own. */
  postgresHome?: string;
  /**
   * The brokers (default the project broker, `scripts/kafka.sh start`): a private one (its own kafka.sh environment,
   * so a broker restart kills nobody else's broker), or a cluster (`nodes: 3`).
   */
  brokers?: BrokerSetup;
  /** SIGKILL this cluster node once about 30% of the events were delivered, and never start it again. */
  killBrokerForGood?: number;
  /** `effectively`, or a naive twin: `no-dedup` (consumer) or `no-outbox` (writer). */
  mode?: ChaosConfig['mode'];
  /** Partitions in flight at once for a consumer with keys in parallel (`--concurrent N`); 0 or absent: sequential. */
  concurrent?: number;
  /** Orders per second written (default: events / 10 s, at least 500). */
  rate?: number;
  /** Every Nth order's event padded with 1 to 5 MB (`--big-every N`; default 0: none). */
  bigEvery?: number;
  /** Orders share this many keys (`--keys K`; default 0: one key per order); the audit then checks each key's order. */
  keys?: number;
  /** The relay reads the outbox's table (`poll`, default) or its write-ahead log (`wal`: on the private cluster). */
  relay?: 'poll' | 'wal';
  /** The Kafka transport of the children (`--transport kafka-js`: the pure-JavaScript client); default `kafka`. */
  transport?: ChaosConfig['transport'];
  /** Roles the kills take in turn (default: the relay — the writer for `no-outbox` — and the consumer). */
  killRoles?: Role[];
  /** Crash points armed in each role's first incarnation (deterministic crash tests). */
  crashAt?: Partial<Record<Role, string>>;
  /** Give up after this long (default scaled to the run: see `defaultTimeoutMs`). */
  timeoutMs?: number;
  /** Stop once the writer is done and nothing moved for this long (default 15 s, 30 s with restarts). */
  idleMs?: number;
  /** Tests: SIGSTOP a role once this many orders were written / e-mails applied (work left pending where it is). */
  freeze?: Partial<Record<Role, { afterOrders?: number; afterDelivered?: number }>>;
  /** Tests: roles started only once the writer has finished and `afterWriter` ran. */
  holdUntilWritten?: Role[];
  /** Tests: runs once when the writer has finished (before the held roles start). */
  afterWriter?: (db: Db, config: ChaosConfig) => Promise<void>;
  /** Stops the run as the deadline would (the audit and the ending are still given): `npm run chaos` on SIGINT/SIGTERM. */
  signal?: AbortSignal;
  /**
   * Network faults (`--net-faults`): every role's connections through fault proxies, a private broker (see
   * net-faults.ts), and this many faults spread over the run, between the kills.
   */
  netFaults?: number;
  /** Keep the schema and topic afterwards (default: drop them). */
  keep?: boolean;
  log?: (line: string) => void;
}

export interface ChaosResult {
  events: number;
  kills: number;
  orders: number;
  emails: number;
  /** Orders with at least one e-mail. */
  delivered: number;
  /** Events not delivered but still on their way: in the outbox, on the topic, or not written yet. */
  pending: number;
  pendingOutbox: number;
  pendingTopic: number;
  /** Orders the writer had not written when the run stopped. */
  unwritten: number;
  /** Events provably gone: no e-mail, not in the outbox, not on the topic past the group's committed offset. */
  lost: number;
  /** Of the lost: dead-lettered by the group, set aside by the relay as refused (the library gave up on them). */
  deadLettered: number;
  refused: number;
  /** The lost events the library gave up on, with how and why (the run's log prints them). */
  givenUp: { key: string; how: string; reason: string }[];
  duplicated: number;
  /** With `keys`: e-mails applied before an earlier order of their key (by the e-mails' insertion order); else null. */
  outOfOrder: number | null;
  /** Kills per named hop or `random`. */
  killsAt: Record<string, number>;
  restarts: { broker: number; postgres: number };
  /** The cluster node killed for good, once it was. */
  brokerKilledForGood?: number;
  /** Per kill of the relay or the consumer: the seconds until its successor published or applied an event. */
  recoveries: Recovery[];
  /** Recoveries that overlapped a broker or PostgreSQL outage of the run (its time is the outage's, mostly). */
  recoveriesInOutages: Recovery[];
  /** Kills whose successor applied nothing before it was killed in turn or the run ended. */
  unmeasuredRecoveries: number;
  /** Kills done after the events were all delivered (they were owed: the events flowed faster than the kills). */
  killsLate: number;
  /** Network faults injected, each with the seconds to its role's next progress once healed. */
  netFaults: NetFault[];
  /** Child exits the kit did not cause (each child is restarted all the same). */
  crashes: number;
  /** The run stopped before everything was delivered (at the deadline or after no progress). */
  stoppedEarly: boolean;
  config: ChaosConfig;
}

/**
 * Orders per second by default: the events spread over 10 s, or over 1.5 s per kill when there are many kills (each
 * kill should land while events still flow, not after they all arrived), and at least 500.
 */
export function defaultRate(events: number, kills: number, netFaults = 0): number {
  // A network fault and its recovery take several seconds (one at a time): 6 s of writing per fault.
  return Math.max(netFaults > 0 ? 50 : 500, Math.ceil(events / Math.max(10, 1.5 * kills, 6 * netFaults)));
}

export async function runChaos(options: ChaosOptions): Promise<ChaosResult> {
  const log = options.log ?? (() => undefined);
  const id = randomBytes(4).toString('hex');
  const config: ChaosConfig = {
    schema: `chaos_${id}`,
    topic: `chaos-orders-${id}`,
    group: `chaos-notifications-${id}`,
    events: options.events,
    rate: options.rate ?? defaultRate(options.events, options.kills, options.netFaults),
    mode: options.mode ?? 'effectively',
    concurrent: options.concurrent ?? 0,
    bigEvery: options.bigEvery ?? 0,
    keys: options.keys ?? 0,
    relay: options.relay ?? 'poll',
    transport: options.transport ?? 'kafka',
  };
  const restartsWanted = { broker: options.restartBroker ?? 0, postgres: options.restartPostgres ?? 0 };
  const netFaultsWanted = options.netFaults ?? 0;
  // PostgreSQL is restarted only on the project's private cluster, never on the machine's shared server.
  const privatePg: PrivatePostgres | undefined =
    restartsWanted.postgres > 0 || options.privatePostgres || config.relay === 'wal'
      ? await startPrivatePostgres(options.postgresHome)
      : undefined;
  const network: ChaosNetwork | undefined = netFaultsWanted > 0 ? await chaosNetwork(privatePg?.url) : undefined;
  const brokerSetup = network?.brokers ?? options.brokers ?? { nodes: 1 };
  if (options.killBrokerForGood !== undefined && brokerSetup.nodes < 2) {
    throw new Error('killBrokerForGood needs a cluster (brokers.nodes >= 2): one broker is all there is');
  }
  const { brokers, startedHere: brokersStartedHere } = await readyBrokers(brokerSetup, log);
  const db = pgDb({ max: 2, ...(privatePg ? { connectionString: privatePg.url } : {}) });
  const transport = kafkaTransport({ brokers });
  const admin = transport.admin();
  const roles: Role[] = config.mode === 'no-outbox' ? ['writer', 'consumer'] : ['writer', 'relay', 'consumer'];
  const entries = await childEntries(roles, log);
  const children = chaosChildren(config, {
    ...(options.crashAt ? { crashAt: options.crashAt } : {}),
    entries,
    env: { KAFKA_BROKERS: brokers.join(','), ...(privatePg ? { DATABASE_URL: privatePg.url } : {}) },
    ...(network ? { roleEnv: network.roleEnv } : {}),
    log,
  });
  const restarts = { broker: 0, postgres: 0 };
  const attempted = { broker: 0, postgres: 0 };
  let brokerKilledForGood: number | undefined;
  let forGoodAttempted = 0;
  /** Broker and PostgreSQL outages the run caused, [from, to] in ms. */
  const outages: [number, number][] = [];
  const duringOutage = (recovery: Recovery) =>
    outages.some(([from, to]) => recovery.killedAt <= to && recovery.killedAt + recovery.seconds * 1000 >= from);
  const held = new Set(options.holdUntilWritten ?? []);
  const killRoles: Role[] = options.killRoles ?? [config.mode === 'no-outbox' ? 'writer' : 'relay', 'consumer'];
  const frozen = new Set<Role>();

  const measure = () => untilUp(() => auditStory(db, config.schema), { what: 'auditor', log });
  const progress = progressCounter(db, config.schema);

  try {
    await untilUp(() => migrate(db, { schema: config.schema }), { what: 'auditor', log });
    await db.query(loadSql(import.meta.url, '../boxoffice/schema.sql', config.schema));
    await admin.createTopics([{ topic: config.topic, partitions: 6 }]);
    for (const role of roles) if (!held.has(role)) children.spawn(role);
    // A freeze due from the start (after 0 orders or e-mails) is done at the spawn, not at the first look 250 ms on:
    // by then a relay has published its first pass (a test that froze the relay "at once" saw 100 events delivered).
    for (const [role, at] of Object.entries(options.freeze ?? {}) as [
      Role,
      { afterOrders?: number; afterDelivered?: number },
    ][]) {
      if ((at.afterOrders === 0 || at.afterDelivered === 0) && !held.has(role)) {
        children.freeze(role);
        frozen.add(role);
      }
    }

    const deadline = Date.now() + (options.timeoutMs ?? defaultTimeoutMs({ ...options, ...restartsWanted }));
    // A silent connection costs its client's timeout (10-12 s in the kit) before it moves again: more patience then.
    const idleMs =
      options.idleMs ?? (restartsWanted.broker + restartsWanted.postgres + netFaultsWanted > 0 ? 30_000 : 15_000);
    let killsDone = 0;
    let netDone = 0;
    let killsLate = 0;
    let lastEmails = -1;
    let lastExact = 0;
    let lastAudit = 0;
    let idleSince = Date.now();
    let stoppedEarly = false;
    let afterWriterDone = false;
    for (;;) {
      await sleep(250);
      // Quiet for a second: recount every e-mail, at most every 5 s (see progress.ts).
      const exact = Date.now() - idleSince > 1000 && Date.now() - lastExact > 5000;
      if (exact) lastExact = Date.now();
      const now = await untilUp(() => progress.read(exact), { what: 'auditor', log });
      // Orders with an e-mail, as a pace: the exact figure comes from the audit at the end.
      const delivered = Math.min(now.orders, now.emails);
      const writerFinished = children.finished('writer');
      if (writerFinished && !afterWriterDone) {
        afterWriterDone = true;
        await options.afterWriter?.(db, config);
        for (const role of held) children.spawn(role);
        held.clear();
      }
      for (const [role, at] of Object.entries(options.freeze ?? {}) as [
        Role,
        { afterOrders?: number; afterDelivered?: number },
      ][]) {
        if (frozen.has(role)) continue;
        if (
          (at.afterOrders !== undefined && now.orders >= at.afterOrders) ||
          (at.afterDelivered !== undefined && delivered >= at.afterDelivered)
        ) {
          children.freeze(role);
          frozen.add(role);
        }
      }
      // Faults still owed when the work went quiet (the last events flowed faster than the faults) are done then.
      const owedAtTheEnd = writerFinished && Date.now() - idleSince > idleMs / 3;
      const due = (done: number, of: number, offset: number) =>
        done < of && (delivered >= ((done + offset) / (of + 1)) * config.events || owedAtTheEnd);
      // Kill i lands when i/(kills+1) of the events were delivered, taking the kill roles in turn.
      if (due(killsDone, options.kills, 1)) {
        const preferred = killRoles[killsDone % killRoles.length]!;
        // A writer that has finished cannot be killed any more: the consumer takes its turn.
        const role: Role = children.finished(preferred) ? 'consumer' : preferred;
        // Owed at the end, with no work left, no child reaches a named hop: killed where it is, without the wait.
        const late = delivered < ((killsDone + 1) / (options.kills + 1)) * config.events;
        // A kill that found no live child (it was just being replaced, or had finished) is tried again.
        if (await children.kill(role, killsDone % 4 < 2 && !late)) {
          killsDone += 1;
          if (late) killsLate += 1;
        }
      }
      // Network faults land between the kills, at (i+¼)/(N+1), one role's connection each (net-faults.ts).
      if (network && due(netDone, netFaultsWanted, 0.25) && (network.quiet() || owedAtTheEnd)) {
        const fault = network.inject(netDone);
        netDone += 1;
        log(`chaos: net fault ${fault.kind} on ${fault.role}:${fault.link}`);
      }
      network?.settle(children.progressAfter);
      // Restarts land between the kills: the broker's at (j+½)/(B+1) of the delivered events, PostgreSQL's at (j+¾)/(P+1).
      // A restart that failed is reported and not counted in `restarts`, but not tried again.
      if (due(attempted.broker, restartsWanted.broker, 0.5)) {
        attempted.broker += 1;
        const from = Date.now();
        await restartBroker(brokerSetup, brokers, attempted.broker - 1, options.killBrokerForGood).then(
          (seconds) => {
            restarts.broker += 1;
            log(`chaos: restarted broker (SIGKILL; down ${seconds.toFixed(1)} s)`);
          },
          (error: Error) => log(`chaos: broker restart failed: ${error.message}`),
        );
        outages.push([from, Date.now()]);
        idleSince = Date.now();
      }
      if (due(attempted.postgres, restartsWanted.postgres, 0.75)) {
        attempted.postgres += 1;
        const from = Date.now();
        await privatePg!.restart(options.postgresDownMs).then(
          (seconds) => {
            restarts.postgres += 1;
            log(`chaos: restarted postgres (down ${seconds.toFixed(1)} s)`);
          },
          (error: Error) => log(`chaos: postgres restart failed: ${error.message}`),
        );
        outages.push([from, Date.now()]);
        idleSince = Date.now();
      }
      // A cluster node killed for good at about 30% of the events delivered: the rest flows through the others.
      if (options.killBrokerForGood !== undefined && due(forGoodAttempted, 1, 0.6)) {
        forGoodAttempted = 1;
        const node = options.killBrokerForGood;
        await killBrokerForGood(brokerSetup, brokers, node).then(
          () => {
            brokerKilledForGood = node;
            log(`chaos: killed broker node ${node} for good (SIGKILL; not started again)`);
          },
          (error: Error) => log(`chaos: killing broker node ${node} failed: ${error.message}`),
        );
        outages.push([Date.now(), Date.now()]);
        idleSince = Date.now();
      }
      if (now.emails !== lastEmails) {
        lastEmails = now.emails;
        idleSince = Date.now();
      }
      const faultsDone =
        killsDone >= options.kills &&
        netDone >= netFaultsWanted &&
        forGoodAttempted >= (options.killBrokerForGood === undefined ? 0 : 1) &&
        attempted.broker >= restartsWanted.broker &&
        attempted.postgres >= restartsWanted.postgres;
      // Complete once the exact audit agrees (run only when the cheap count says every order has its e-mail, at most
      // every 5 s).
      let complete = false;
      if (writerFinished && faultsDone && now.orders === config.events && now.emails >= config.events) {
        if (Date.now() - lastAudit > 5000) {
          lastAudit = Date.now();
          complete = (await measure()).lost === 0;
        }
      }
      // No progress for a while, once every fault was done (faults still owed are done first, up to the deadline).
      const stalled = writerFinished && afterWriterDone && Date.now() - idleSince > idleMs && faultsDone;
      const stopped = options.signal?.aborted === true;
      if (complete || stalled || stopped || Date.now() > deadline) {
        stoppedEarly = !complete;
        const why = stalled ? 'after no progress' : stopped ? 'on a signal' : 'at the deadline';
        if (!complete) log(`chaos: stopping ${why}`);
        break;
      }
    }
    // Let redeliveries after the last kill land before the audit.
    if (!stoppedEarly) await sleep(2000);
    await children.stopAll();
    const final = await measure();
    const where = await locateMissing(db, transport, config);
    const outOfOrder = config.keys > 0 ? await appliedOutOfOrder(db, config) : null;
    const unwritten = Math.max(0, config.events - final.orders);
    return {
      events: config.events,
      kills: children.kills,
      orders: final.orders,
      emails: final.emails,
      delivered: final.orders - final.lost,
      pending: unwritten + where.pendingOutbox + where.pendingTopic,
      pendingOutbox: where.pendingOutbox,
      pendingTopic: where.pendingTopic,
      unwritten,
      lost: where.lost,
      deadLettered: where.deadLettered,
      refused: where.refused,
      givenUp: where.givenUp,
      duplicated: final.duplicated,
      outOfOrder,
      killsAt: children.killsAt,
      restarts,
      ...(brokerKilledForGood === undefined ? {} : { brokerKilledForGood }),
      recoveries: children.recoveries.filter((recovery) => !duringOutage(recovery)),
      recoveriesInOutages: children.recoveries.filter(duringOutage),
      unmeasuredRecoveries: children.unmeasured,
      killsLate,
      netFaults: network?.faults ?? [],
      crashes: children.crashes,
      stoppedEarly,
      config,
    };
  } finally {
    children.killAll();
    await entries.cleanup();
    if (!options.keep) {
      if (config.relay === 'wal') await dropWal(db, config.schema, log);
      await db.query(`DROP SCHEMA IF EXISTS ${config.schema} CASCADE`).catch(() => undefined);
      await admin.deleteTopics([config.topic]).catch(() => undefined);
    }
    await admin.close();
    await db.close();
    await network?.close();
    // A private cluster this run started is stopped: the next run (or another checkout's) finds its port free.
    if (privatePg?.startedHere) await privatePg.stop().catch((error: Error) => log(`chaos: ${error.message}`));
    // Brokers this run started are stopped too (three JVMs idling on a shared machine cost its other users).
    if (brokersStartedHere) await stopBrokers(brokerSetup).catch((error: Error) => log(`chaos: ${error.message}`));
  }
}

/** E-mails whose order came after an order of the same key applied later (by the e-mails' identity: apply order). */
async function appliedOutOfOrder(db: Db, config: ChaosConfig): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (
       SELECT o.order_no, max(o.order_no) OVER (PARTITION BY o.order_no % $1 ORDER BY e.id
                                               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before
         FROM ${config.schema}.emails AS e JOIN ${config.schema}.orders AS o ON o.id = e.order_id) AS applied
      WHERE before > order_no`,
    [config.keys],
  );
  return rows[0]?.n ?? 0;
}
