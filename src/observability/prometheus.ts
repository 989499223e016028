/**
 * The operator's numbers in the Prometheus text format, read at each scrape from the library's tables (dead letters,
 * the outbox backlog, redrives), the transport (consumer lag) and this process (dedup outcomes). Needs no
 * OpenTelemetry SDK and no metrics library: `prometheusMetrics(db)` gives the text, `metricsHandler(db)` serves it on
 * `node:http`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { consumerLag } from '../backpressure/lag.ts';
import { librarySchema } from '../db/identifiers.ts';
import { rethrowNotMigrated } from '../db/not-migrated.ts';
import type { Queryable } from '../db/port.ts';
import type { Admin, Transport } from '../transport/port.ts';
import { errorFields, type Logger, stderrLogger } from './logger.ts';
import { dedupOutcomeTotals } from './otel-metrics.ts';
import { type MetricFamily, prometheusContentType, renderPrometheus, type Sample } from './prometheus-text.ts';

export interface PrometheusOptions {
  /** Schema of the library's tables (default: the `EFFECTIVELY_SCHEMA` environment variable, else `effectively`). */
  schema?: string;
  /**
   * Where `effectively_consumer_lag` comes from (default none: the family is left out): a transport (an admin is opened
   * and closed per scrape) or an open `Admin`, and the groups with the topics each reads.
   */
  lag?: { source: Transport | Admin; groups: readonly { group: string; topics: readonly string[] }[] };
}

interface BacklogRow extends Record<string, unknown> {
  count: number;
  oldest: number | null;
}

interface StatusRow extends Record<string, unknown> {
  status: string;
  count: number;
}

const backlog = (table: string, status: string, since: string) =>
  `SELECT count(*)::int AS count, extract(epoch FROM now() - min(${since}))::float8 AS oldest FROM ${table}${status}`;

async function deadLetterFamilies(db: Queryable, schema: string): Promise<MetricFamily[]> {
  // The first statement of a scrape: a schema never migrated says so (EFF_NOT_MIGRATED).
  const deadRows = await db
    .query<BacklogRow>(backlog(`${schema}.dead_letters`, " WHERE status = 'dead'", 'last_failed_at'))
    .catch(rethrowNotMigrated);
  const dead = deadRows.rows[0];
  const acted = await db.query<StatusRow>(
    `SELECT status, count(*)::int AS count FROM ${schema}.dead_letters WHERE status <> 'dead' GROUP BY status`,
  );
  const byStatus = new Map(acted.rows.map((row) => [row.status, row.count]));
  return [
    {
      name: 'effectively_dead_letters',
      help: 'Dead letters waiting for an operator (status dead).',
      type: 'gauge',
      samples: [{ value: dead?.count ?? 0 }],
    },
    {
      name: 'effectively_dead_letter_oldest_age_seconds',
      help: 'Seconds since the oldest waiting dead letter was kept (0 when there is none).',
      type: 'gauge',
      samples: [{ value: Math.max(0, dead?.oldest ?? 0) }],
    },
    {
      name: 'effectively_redriven_messages_total',
      help: 'Dead letters an operator acted on: redriven (sent again) or discarded.',
      type: 'counter',
      samples: ['redriven', 'discarded'].map((outcome) => ({ labels: { outcome }, value: byStatus.get(outcome) ?? 0 })),
    },
  ];
}

async function outboxFamilies(db: Queryable, schema: string): Promise<MetricFamily[]> {
  const row = (await db.query<BacklogRow>(backlog(`${schema}.outbox`, '', 'created_at'))).rows[0];
  return [
    {
      name: 'effectively_outbox_pending_messages',
      help: 'Outbox rows not yet published (refused ones included).',
      type: 'gauge',
      samples: [{ value: row?.count ?? 0 }],
    },
    {
      name: 'effectively_outbox_oldest_pending_age_seconds',
      help: 'Seconds since the oldest unpublished outbox row was written (0 when the outbox is empty).',
      type: 'gauge',
      samples: [{ value: Math.max(0, row?.oldest ?? 0) }],
    },
  ];
}

async function lagFamily(lag: NonNullable<PrometheusOptions['lag']>): Promise<MetricFamily> {
  const samples: Sample[] = [];
  for (const { group, topics } of lag.groups) {
    const { partitions } = await consumerLag(lag.source, group, topics);
    for (const p of partitions)
      samples.push({ labels: { group, topic: p.topic, partition: p.partition }, value: p.lag });
  }
  return {
    name: 'effectively_consumer_lag',
    help: 'Records written to a partition that the group has not committed yet.',
    type: 'gauge',
    samples,
  };
}

function dedupFamily(): MetricFamily {
  const samples: Sample[] = [];
  for (const [group, outcomes] of dedupOutcomeTotals()) {
    for (const [outcome, value] of outcomes) samples.push({ labels: { group, outcome }, value });
  }
  return {
    name: 'effectively_dedup_outcomes_total',
    help: "Events this process's consumers settled, by dedup outcome: applied, duplicate, stale, parked.",
    type: 'counter',
    samples,
  };
}

/** The metrics as Prometheus text (one scrape: a few short queries, and the lag when `lag` is given). */
export async function prometheusMetrics(db: Queryable, options: PrometheusOptions = {}): Promise<string> {
  const schema = librarySchema(options.schema);
  // One after the other: an embedded database is one session.
  const families = [...(await deadLetterFamilies(db, schema)), ...(await outboxFamilies(db, schema))];
  if (options.lag) families.push(await lagFamily(options.lag));
  families.push(dedupFamily());
  return renderPrometheus(families);
}

export interface MetricsHandlerOptions extends PrometheusOptions {
  /** Where a failed scrape is logged (default: stderr). */
  logger?: Logger;
}

/**
 * A `node:http` request handler serving `prometheusMetrics` (GET or HEAD; 405 otherwise). A scrape that fails (the
 * database is down) answers 503 with the error's code, and is logged.
 */
export function metricsHandler(
  db: Queryable,
  options: MetricsHandlerOptions = {},
): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  const logger = options.logger ?? stderrLogger;
  return async (request, response) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('GET only\n');
      return;
    }
    try {
      const text = await prometheusMetrics(db, options);
      response.writeHead(200, { 'content-type': prometheusContentType });
      response.end(request.method === 'HEAD' ? undefined : text);
    } catch (error) {
      logger.error('metrics scrape failed', errorFields(error));
      const code = (error as { code?: unknown }).code;
      response.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' });
      response.end(`metrics unavailable${typeof code === 'string' ? ` (${code})` : ''}\n`);
    }
  };
}
