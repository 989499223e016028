/**
 * The consuming hops: `process <topic>` (CONSUMER) around a handler's call, and `commit <topic>` around the commit of
 * the range's transaction, plus the duration and counters of every range. A span of one record is a child of the
 * context the record carries (its `send` span); a span of several records starts a trace of its own and links to
 * each record's context (the messaging conventions' batch shape).
 */
import type { IncomingRecord } from '../transport/port.ts';
import type { Context, Link, OtelApi, Span } from './otel-api.ts';
import { otelApi, SpanKind } from './otel-api.ts';
import { recordProcessed } from './otel-metrics.ts';
import {
  commitAttributes,
  consumerMetricAttributes,
  errorType,
  type MessagingSystem,
  outcomeAttributes,
  processAttributes,
  spanNames,
} from './semconv.ts';
import { contextOfRecord, endSpan, hasSpan, startSpan, withSpan } from './tracing.ts';

/** The most links one span gets (a batch of thousands links to the first ones). */
const maxLinks = 128;

/** The parent of a span over `records` (the one record's context, else the root) and the links to their contexts. */
function parentAndLinks(api: OtelApi, records: readonly IncomingRecord[]): { parent: Context; links?: () => Link[] } {
  if (records.length === 1) return { parent: contextOfRecord(api, records[0]!.headers) };
  const links = () => {
    const out: Link[] = [];
    for (const record of records) {
      if (out.length >= maxLinks) break;
      const context = contextOfRecord(api, record.headers);
      if (hasSpan(api, context)) out.push({ context: api.trace.getSpan(context)!.spanContext() });
    }
    return out;
  };
  return { parent: api.ROOT_CONTEXT, links };
}

/**
 * Runs a handler's call for `records` (one, or a batch handler's fresh ones) inside a `process` span: spans the handler
 * starts, and the trace context an effect it schedules keeps, belong to it.
 */
export function traceProcess<T>(
  system: MessagingSystem,
  group: string,
  records: readonly IncomingRecord[],
  eventId: string | undefined,
  fn: () => Promise<T>,
): Promise<T> {
  const api = otelApi();
  if (!api || records.length === 0) return fn();
  const { parent, links } = parentAndLinks(api, records);
  const first = records[0]!;
  const span = startSpan(
    api,
    spanNames.process(first.topic),
    SpanKind.CONSUMER,
    parent,
    () => processAttributes(system, group, first, records.length, eventId),
    links,
  );
  return withSpan(api, parent, span, fn).then(
    (result) => {
      endSpan(span);
      return result;
    },
    (error: unknown) => {
      endSpan(span, error);
      throw error;
    },
  );
}

export interface RangeTrace {
  /** The transaction's work is done: what follows is its COMMIT (the `commit` span starts). */
  committing(): void;
  /** The transaction ended: committed with these outcomes, or failed with `error`. */
  end(outcomes: readonly string[] | undefined, error?: unknown): void;
}

/** The `commit` span and the metrics of one range's transaction. */
export function traceRange(system: MessagingSystem, group: string, records: readonly IncomingRecord[]): RangeTrace {
  const started = performance.now();
  const api = otelApi();
  const first = records[0]!;
  let commit: Span | undefined;
  return {
    committing() {
      if (!api) return;
      const { parent, links } = parentAndLinks(api, records);
      commit = startSpan(
        api,
        spanNames.commit(first.topic),
        SpanKind.CLIENT,
        parent,
        () => commitAttributes(system, group, first.topic, first.partition),
        links,
      );
    },
    end(outcomes, error) {
      if (commit) {
        if (outcomes && commit.isRecording()) commit.setAttributes(outcomeAttributes(outcomes));
        endSpan(commit, error);
      }
      const seconds = (performance.now() - started) / 1000;
      const attributes = consumerMetricAttributes(system, group, first.topic);
      recordProcessed(attributes, group, seconds, outcomes, error === undefined ? undefined : errorType(error));
    },
  };
}
