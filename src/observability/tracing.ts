/**
 * Spans of every hop, through the application's OpenTelemetry API (`otel-api.ts`): none at all when the API is not
 * installed, and non-recording ones (nothing built beyond the span object) when no SDK is registered. The trace
 * context travels with the message as the W3C `traceparent` (and `tracestate`) header: written into the outbox row
 * at enqueue, published with it, read back by the consumer, and kept with the effects a handler schedules.
 */
import type { Attributes, Context, Link, OtelApi, Span, TextMapGetter } from './otel-api.ts';
import { otelApi, SpanKind, StatusError } from './otel-api.ts';
import { errorType, scopeName } from './semconv.ts';

/** Attributes without the undefined ones (an SDK warns about them). */
function defined(attributes: Attributes): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined) out[name] = value;
  return out;
}

/** The library's tracer, asked once: the API's tracer follows a provider registered later by itself. */
let tracer: { api: OtelApi; tracer: ReturnType<OtelApi['trace']['getTracer']> } | undefined;
function tracerOf(api: OtelApi) {
  if (tracer?.api !== api) tracer = { api, tracer: api.trace.getTracer(scopeName) };
  return tracer.tracer;
}

/** A span of this library; `attributes` is only called when the span records (no cost without an SDK). */
export function startSpan(
  api: OtelApi,
  name: string,
  kind: number,
  parent: Context,
  attributes: () => Attributes,
  links?: () => Link[],
): Span {
  const span = tracerOf(api).startSpan(name, { kind, ...(links ? { links: links() } : {}) }, parent);
  if (span.isRecording()) span.setAttributes(defined(attributes()));
  return span;
}

/** Ends a span, as failed when `error` is given. */
export function endSpan(span: Span, error?: unknown): void {
  if (error !== undefined && span.isRecording()) {
    span.setAttribute('error.type', errorType(error));
    span.setStatus({ code: StatusError, message: error instanceof Error ? error.message : String(error) });
    if (error instanceof Error) span.recordException(error);
  }
  span.end();
}

/** Reads a trace context from Kafka record headers (bytes). */
const recordHeaders: TextMapGetter<Readonly<Record<string, Buffer>>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key]?.toString('utf8'),
};

/** Reads a trace context from text headers (an outbox row, an effect). */
const textHeaders: TextMapGetter<Readonly<Record<string, string>>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};

/** The context carried by text headers (the active one when they carry none). */
export function contextOfHeaders(api: OtelApi, headers: Readonly<Record<string, string>> | null | undefined): Context {
  return headers ? api.propagation.extract(api.context.active(), headers, textHeaders) : api.context.active();
}

/** The context a record carries, from the root (a consumer's work starts no trace of its own). */
export function contextOfRecord(api: OtelApi, headers: Readonly<Record<string, Buffer>>): Context {
  return api.propagation.extract(api.ROOT_CONTEXT, headers, recordHeaders);
}

/** True when `context` holds a valid span context (a trace to join). */
export function hasSpan(api: OtelApi, context: Context): boolean {
  const span = api.trace.getSpan(context);
  return span !== undefined && api.trace.isSpanContextValid(span.spanContext());
}

/** The headers that carry `context` (`traceparent`, `tracestate`, whatever the registered propagator writes). */
export function headersOf(api: OtelApi, context: Context): Record<string, string> {
  const carrier: Record<string, string> = {};
  // No valid span (no SDK, no trace to continue): nothing to carry, and no propagator call.
  if (hasSpan(api, context)) api.propagation.inject(context, carrier);
  return carrier;
}

/**
 * The headers that carry the active context (inside a consumer's handler: its `process` span), or null when there is
 * no API or no trace: what an effect scheduled now keeps, so its provider call joins the trace.
 */
export function activeTraceHeaders(): Record<string, string> | null {
  const api = otelApi();
  if (!api) return null;
  const active = api.context.active();
  if (!hasSpan(api, active)) return null;
  const headers = headersOf(api, active);
  return Object.keys(headers).length > 0 ? headers : null;
}

/** Runs `fn` with `span` active (spans the application starts inside it become its children). */
export function withSpan<T>(api: OtelApi, parent: Context, span: Span, fn: () => Promise<T>): Promise<T> {
  return api.context.with(api.trace.setSpan(parent, span), fn);
}

export { SpanKind };
