/**
 * The producing hops: the outbox's `send <topic>` span per event (whose context goes into the row as `traceparent`)
 * and the relay's `publish <topic>` span per row (a child of it, ended when the transport acknowledged the row).
 */
import type { Event } from '../envelope/event.ts';
import type { Span } from './otel-api.ts';
import { otelApi, SpanKind } from './otel-api.ts';
import { recordSent } from './otel-metrics.ts';
import {
  type MessagingSystem,
  publishAttributes,
  publishMetricAttributes,
  sendAttributes,
  spanNames,
} from './semconv.ts';
import { contextOfHeaders, endSpan, hasSpan, headersOf, startSpan } from './tracing.ts';

export interface SendSpans {
  /** The headers carrying the event's `send` span (to add to its row's headers). */
  headers(index: number): Record<string, string>;
  end(error?: unknown): void;
}

/**
 * One `send` span per event, a child of the active span or, without one, of the trace the event's own headers carry
 * (an event passed on from elsewhere). Undefined without the API.
 */
export function startSendSpans(events: readonly Event[]): SendSpans | undefined {
  const api = otelApi();
  if (!api) return undefined;
  const active = api.context.active();
  const fromActive = hasSpan(api, active);
  const spans: Span[] = [];
  const carriers: Record<string, string>[] = [];
  for (const event of events) {
    const parent = fromActive || !event.headers ? active : contextOfHeaders(api, event.headers);
    const span = startSpan(api, spanNames.send(event.topic), SpanKind.PRODUCER, parent, () => sendAttributes(event));
    spans.push(span);
    carriers.push(headersOf(api, api.trace.setSpan(parent, span)));
  }
  return {
    headers: (index) => carriers[index] ?? {},
    end(error) {
      for (const span of spans) endSpan(span, error);
    },
  };
}

interface PublishedRow {
  id?: string;
  topic: string;
  key: string;
  headers: Readonly<Record<string, string>>;
}

export interface PublishSpans {
  end(error?: unknown): void;
}

/**
 * One `publish` span per row that carries a trace (rows enqueued without one start none), and the sent counter per
 * topic once the transport acknowledged them. Undefined without the API.
 */
export function startPublishSpans(system: MessagingSystem, rows: readonly PublishedRow[]): PublishSpans | undefined {
  const api = otelApi();
  if (!api) return undefined;
  const spans: Span[] = [];
  for (const row of rows) {
    const parent = contextOfHeaders(api, row.headers);
    if (!hasSpan(api, parent)) continue;
    spans.push(
      startSpan(api, spanNames.publish(row.topic), SpanKind.PRODUCER, parent, () => publishAttributes(system, row)),
    );
  }
  return {
    end(error) {
      for (const span of spans) endSpan(span, error);
      if (error !== undefined) return;
      const perTopic = new Map<string, number>();
      for (const row of rows) perTopic.set(row.topic, (perTopic.get(row.topic) ?? 0) + 1);
      for (const [topic, count] of perTopic) recordSent(count, publishMetricAttributes(system, topic));
    },
  };
}
