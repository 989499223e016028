// The health view: the outbox's backlog, the relays of this process, lag per group and partition (records, and
// seconds where the log keeps record times), retry-topic depth, dead letters and their inflow, breaker and limiter
// state, and what is firing (the doctor's warnings and failures).

import { consumerLag } from '../backpressure/lag.ts';
import type { BackpressureMetrics, BackpressureSnapshot } from '../backpressure/metrics.ts';
import type { Finding } from '../cli/doctor/finding.ts';
import { consumerGroups } from '../cli/doctor/groups.ts';
import { committedTopics, kafkaAdmin } from '../cli/doctor/kafka.ts';
import { doctorFindings } from '../cli/doctor.ts';
import type { Db } from '../db/port.ts';
import { loadSqlSet } from '../db/sql.ts';
import type { RelayStats } from '../outbox/relay-stats.ts';
import { defaultBrokers } from '../transport/kafka/config.ts';
import { kafkaTransport } from '../transport/kafka/transport.ts';

export interface PartitionLagView {
  group: string;
  topic: string;
  partition: number;
  lag: number;
  /** How long the oldest record not yet committed by the group has waited; null when none waits or not known. */
  lagSeconds: number | null;
  /** A retry topic (`<topic>-retry-n`): its lag is the retry depth. */
  retry: boolean;
}

export interface HealthSources {
  db: Db;
  schema: string;
  transport: 'kafka' | 'postgres';
  /** Topics whose lag is read on Kafka (default: those each group committed on). */
  topics?: readonly string[] | undefined;
  /** Relays running in this process, for their heartbeat. */
  relays?: readonly { stats(): RelayStats }[] | undefined;
  /** The sender's breaker and limiter, when the console runs beside it. */
  backpressure?: BackpressureMetrics | undefined;
  /** The oldest outbox row's age above which it is an alert (default 5 min). */
  stuckAfterMs?: number | undefined;
  /** A group's lag (records) above which it is an alert (default 10,000). */
  maxLag?: number | undefined;
}

const retryTopic = /-retry-\d+$/;

async function kafkaLag(source: HealthSources): Promise<PartitionLagView[]> {
  const groups = await consumerGroups(source.db, source.schema, undefined);
  if (groups.length === 0) return [];
  const brokers = defaultBrokers();
  const client = source.topics ? undefined : await kafkaAdmin(brokers, 3000);
  const admin = kafkaTransport({ brokers, clientId: 'effectively-console' }).admin();
  try {
    const views: PartitionLagView[] = [];
    for (const group of groups) {
      const topics = source.topics ?? (await committedTopics(client!, group.name));
      const lag = await consumerLag(admin, group.name, topics);
      for (const p of lag.partitions)
        views.push({ group: group.name, ...p, lagSeconds: null, retry: retryTopic.test(p.topic) });
    }
    return views;
  } finally {
    await admin.close();
    await client?.disconnect().catch(() => undefined);
  }
}

async function embeddedLag(db: Db, sql: string): Promise<PartitionLagView[]> {
  const { rows } = await db.query<{
    group_id: string;
    topic: string;
    partition: number;
    lag: number;
    lag_seconds: number | null;
  }>(sql);
  return rows.map((row) => ({
    group: row.group_id,
    topic: row.topic,
    partition: row.partition,
    lag: row.lag,
    lagSeconds: row.lag > 0 && row.lag_seconds !== null ? Math.round(row.lag_seconds * 10) / 10 : null,
    retry: retryTopic.test(row.topic),
  }));
}

/** Reads every part of the health view; a part that fails says why instead of failing the view. */
export function healthView(source: HealthSources) {
  const sql = loadSqlSet(import.meta.url, { counts: 'health-counts.sql', lag: 'embedded-lag.sql' }, source.schema);
  const attempt = async <T>(read: () => Promise<T>): Promise<T | { error: string }> => {
    try {
      return await read();
    } catch (error) {
      return { error: error instanceof Error ? error.message : String(error) };
    }
  };
  return async function read() {
    const counts = (await source.db.query<Record<string, number>>(sql.counts)).rows[0]!;
    const lag = await attempt(() =>
      source.transport === 'postgres' ? embeddedLag(source.db, sql.lag) : kafkaLag(source),
    );
    const findings: Finding[] = await doctorFindings(
      source.db,
      {
        schema: source.schema,
        groups: undefined,
        topics: source.topics ? [...source.topics] : undefined,
        maxLag: source.maxLag ?? 10_000,
        stuckAfterMs: source.stuckAfterMs ?? 300_000,
      },
      source.transport,
    );
    const backpressure: BackpressureSnapshot | null = source.backpressure ? await source.backpressure.metrics() : null;
    const alerts = findings.filter((f) => f.level === 'warn' || f.level === 'fail');
    if (counts.dead! > 0)
      alerts.unshift({
        level: 'warn',
        check: 'dead-letters',
        what: `${counts.dead} dead letters wait for a decision (${counts.dead_last_hour} new in the last hour)`,
        fix: 'see the failure groups; fix the cause, then redrive or discard',
      });
    return {
      at: new Date(),
      transport: source.transport,
      outbox: {
        pending: counts.outbox_pending,
        oldestSeconds: Math.round(counts.outbox_oldest_s! * 10) / 10,
        refused: counts.outbox_refused,
      },
      relays: source.relays ? source.relays.map((relay) => relay.stats()) : null,
      lag,
      deadLetters: {
        dead: counts.dead,
        oldestSeconds: Math.round(counts.dead_oldest_s!),
        lastHour: counts.dead_last_hour,
        lastDay: counts.dead_last_day,
      },
      effects: { dead: counts.effects_dead, pending: counts.effects_pending },
      backpressure,
      alerts,
      findings,
    };
  };
}
