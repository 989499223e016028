/**
 * Every span name, attribute and metric the library reports through OpenTelemetry, in one place. Names follow the
 * OpenTelemetry semantic conventions for messaging (`messaging.*`, span names `{operation} {destination}`) and for
 * CloudEvents (`cloudevents.*`); what has no convention is under `effectively.*`. docs/observability.md lists them.
 */
import type { Attributes } from './otel-api.ts';

/** The instrumentation scope's name (tracer and meter). */
export const scopeName = 'effectively';

/** `messaging.system`: Kafka, or this library's own systems (the outbox, the log in PostgreSQL). */
export type MessagingSystem = 'kafka' | 'effectively';

/** The transport's name (`kafka`, `postgres`) as a `messaging.system`. */
export function systemOf(transportName: string): MessagingSystem {
  return transportName.startsWith('kafka') ? 'kafka' : 'effectively'; // kafka, kafka-js
}

export const spanNames = {
  /** The outbox's enqueue: the message's creation context (PRODUCER). */
  send: (topic: string) => `send ${topic}`,
  /** The relay's publish of an outbox row to the transport (PRODUCER, child of `send`). */
  publish: (topic: string) => `publish ${topic}`,
  /** A consumer's transaction over a range of records (CONSUMER). */
  process: (topic: string) => `process ${topic}`,
  /** The database commit of that transaction: dedup rows, effects and (embedded log) the offset (CLIENT). */
  commit: (topic: string) => `commit ${topic}`,
  /** The sender's provider call for an effect (CLIENT). */
  effect: (kind: string) => `effect ${kind}`,
} as const;

export const metricNames = {
  processDuration: 'messaging.process.duration',
  sent: 'messaging.client.sent.messages',
  consumed: 'messaging.client.consumed.messages',
  dedupOutcomes: 'effectively.dedup.outcomes',
} as const;

/** Histogram boundaries the messaging conventions advise for durations (seconds). */
export const durationBuckets = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** The outbox's `send` span of one event. */
export function sendAttributes(event: {
  id: string;
  topic: string;
  key: string;
  type: string;
  source: string;
}): Attributes {
  return {
    'messaging.system': 'effectively',
    'messaging.operation.name': 'send',
    'messaging.operation.type': 'send',
    'messaging.destination.name': event.topic,
    'messaging.message.id': event.id,
    'messaging.kafka.message.key': event.key,
    'cloudevents.event_id': event.id,
    'cloudevents.event_type': event.type,
    'cloudevents.event_source': event.source,
  };
}

/** The relay's `publish` span of one outbox row. */
export function publishAttributes(
  system: MessagingSystem,
  row: { topic: string; key: string; id?: string },
): Attributes {
  return {
    'messaging.system': system,
    'messaging.operation.name': 'publish',
    'messaging.operation.type': 'send',
    'messaging.destination.name': row.topic,
    'messaging.kafka.message.key': row.key,
    'messaging.message.id': row.id,
  };
}

/** The consumer's `process` span of a range of records of one partition. */
export function processAttributes(
  system: MessagingSystem,
  group: string,
  first: { topic: string; partition: number; offset: string; key: Buffer | null },
  count: number,
  eventId: string | undefined,
): Attributes {
  return {
    'messaging.system': system,
    'messaging.operation.name': 'process',
    'messaging.operation.type': 'process',
    'messaging.destination.name': first.topic,
    'messaging.destination.partition.id': String(first.partition),
    'messaging.consumer.group.name': group,
    'messaging.kafka.offset': Number(first.offset),
    'messaging.batch.message_count': count > 1 ? count : undefined,
    'messaging.message.id': count === 1 ? eventId : undefined,
    'messaging.kafka.message.key': count === 1 && first.key !== null ? first.key.toString('utf8') : undefined,
  };
}

/** How many of a processed range were applied, duplicates, stale or parked (`effectively.dedup.*`). */
export function outcomeAttributes(outcomes: readonly string[]): Attributes {
  const counts: Record<string, number> = {};
  for (const outcome of outcomes) counts[outcome] = (counts[outcome] ?? 0) + 1;
  return {
    'effectively.dedup.applied': counts.applied ?? 0,
    'effectively.dedup.duplicate': counts.duplicate ?? 0,
    'effectively.dedup.stale': counts.stale ?? 0,
    'effectively.dedup.parked': counts.parked ?? 0,
  };
}

/** The `commit` span of a consumer's transaction. */
export function commitAttributes(system: MessagingSystem, group: string, topic: string, partition: number): Attributes {
  return {
    'messaging.system': system,
    'messaging.operation.name': 'commit',
    'messaging.operation.type': 'settle',
    'messaging.destination.name': topic,
    'messaging.destination.partition.id': String(partition),
    'messaging.consumer.group.name': group,
    'db.system.name': 'postgresql',
  };
}

/** The sender's `effect` span of one provider call. */
export function effectAttributes(effect: { id: string; key: string; kind: string; attempts: number }): Attributes {
  return {
    'effectively.effect.id': effect.id,
    'effectively.effect.key': effect.key,
    'effectively.effect.kind': effect.kind,
    'effectively.effect.attempt': effect.attempts,
  };
}

/** `error.type` of a failure: its code (`EFF_*`, a SQLSTATE) when it has one, else its class name. */
export function errorType(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code !== '') return code;
  return error instanceof Error ? error.constructor.name : '_OTHER';
}

/** Metric attributes of a consumer's range. */
export function consumerMetricAttributes(system: MessagingSystem, group: string, topic: string): Attributes {
  return {
    'messaging.system': system,
    'messaging.operation.name': 'process',
    'messaging.destination.name': topic,
    'messaging.consumer.group.name': group,
  };
}

/** Metric attributes of the relay's publish. */
export function publishMetricAttributes(system: MessagingSystem, topic: string): Attributes {
  return { 'messaging.system': system, 'messaging.operation.name': 'publish', 'messaging.destination.name': topic };
}
