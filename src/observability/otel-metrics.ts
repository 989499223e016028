/**
 * The library's OpenTelemetry instruments (`messaging.process.duration`, sent and consumed counters, dedup outcomes),
 * created once through the application's API on first use; nothing without the API. The dedup outcomes are also
 * counted here in the process for the Prometheus text (`prometheus.ts`), which needs no SDK.
 */
import type { Attributes } from './otel-api.ts';
import { otelApi } from './otel-api.ts';
import { durationBuckets, metricNames, scopeName } from './semconv.ts';

interface Instruments {
  processDuration: { record(value: number, attributes?: Attributes): void };
  sent: { add(value: number, attributes?: Attributes): void };
  consumed: { add(value: number, attributes?: Attributes): void };
  dedupOutcomes: { add(value: number, attributes?: Attributes): void };
}

let instruments: Instruments | null | undefined;

function created(): Instruments | null {
  if (instruments !== undefined) return instruments;
  const api = otelApi();
  if (!api) {
    instruments = null;
    return null;
  }
  const meter = api.metrics.getMeter(scopeName);
  instruments = {
    processDuration: meter.createHistogram(metricNames.processDuration, {
      description: 'Duration of processing a range of records in one database transaction (dedup, handler, commit).',
      unit: 's',
      advice: { explicitBucketBoundaries: durationBuckets },
    }),
    sent: meter.createCounter(metricNames.sent, {
      description: 'Messages the relay published and the transport acknowledged.',
      unit: '{message}',
    }),
    consumed: meter.createCounter(metricNames.consumed, {
      description: 'Messages a consumer settled in a committed transaction (applied, duplicate, stale or parked).',
      unit: '{message}',
    }),
    dedupOutcomes: meter.createCounter(metricNames.dedupOutcomes, {
      description: 'Consumed events by dedup outcome: applied, duplicate, stale, parked.',
      unit: '{event}',
    }),
  };
  return instruments;
}

/** Dedup outcomes counted in this process, per group and outcome (for the Prometheus text). */
const outcomeTotals = new Map<string, Map<string, number>>();

export function recordProcessed(
  attributes: Attributes,
  group: string,
  seconds: number,
  outcomes: readonly string[] | undefined,
  error: string | undefined,
): void {
  if (outcomes) {
    const totals = outcomeTotals.get(group) ?? new Map<string, number>();
    outcomeTotals.set(group, totals);
    for (const outcome of outcomes) totals.set(outcome, (totals.get(outcome) ?? 0) + 1);
  }
  const metric = created();
  if (!metric) return;
  metric.processDuration.record(seconds, error === undefined ? attributes : { ...attributes, 'error.type': error });
  if (!outcomes) return;
  metric.consumed.add(outcomes.length, attributes);
  const counts: Record<string, number> = {};
  for (const outcome of outcomes) counts[outcome] = (counts[outcome] ?? 0) + 1;
  for (const [outcome, count] of Object.entries(counts)) {
    metric.dedupOutcomes.add(count, { 'messaging.consumer.group.name': group, 'effectively.dedup.outcome': outcome });
  }
}

export function recordSent(count: number, attributes: Attributes): void {
  created()?.sent.add(count, attributes);
}

/** The dedup outcomes this process counted: group → outcome → count. */
export function dedupOutcomeTotals(): ReadonlyMap<string, ReadonlyMap<string, number>> {
  return outcomeTotals;
}
