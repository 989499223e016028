import { createRequire } from 'node:module';

/**
 * The few parts of `@opentelemetry/api` the library uses, typed here so that neither the code nor the published
 * declarations need the package: it is an optional peer dependency (the application brings the API and its SDK). The
 * API keeps its registered providers on a process-wide global, so the copy resolved from here sees the SDK the
 * application registered through its own copy.
 */
export type Attributes = Record<string, string | number | boolean | undefined>;

export interface SpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

export interface Span {
  isRecording(): boolean;
  setAttribute(name: string, value: string | number | boolean): Span;
  setAttributes(attributes: Attributes): Span;
  setStatus(status: { code: number; message?: string }): Span;
  recordException(exception: Error | string): void;
  spanContext(): SpanContext;
  end(): void;
}

/** An opaque OpenTelemetry context. */
export type Context = object;

export interface Link {
  context: SpanContext;
  attributes?: Attributes;
}

export interface SpanOptions {
  kind?: number;
  attributes?: Attributes;
  links?: Link[];
  root?: boolean;
}

interface Tracer {
  startSpan(name: string, options?: SpanOptions, context?: Context): Span;
}

interface Counter {
  add(value: number, attributes?: Attributes): void;
}

interface Histogram {
  record(value: number, attributes?: Attributes): void;
}

interface Meter {
  createCounter(name: string, options?: { description?: string; unit?: string }): Counter;
  createHistogram(
    name: string,
    options?: { description?: string; unit?: string; advice?: { explicitBucketBoundaries?: number[] } },
  ): Histogram;
}

export interface TextMapGetter<C> {
  keys(carrier: C): string[];
  get(carrier: C, key: string): string | string[] | undefined;
}

export interface OtelApi {
  trace: {
    getTracer(name: string, version?: string): Tracer;
    setSpan(context: Context, span: Span): Context;
    getSpan(context: Context): Span | undefined;
    isSpanContextValid(spanContext: SpanContext): boolean;
  };
  context: {
    active(): Context;
    with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
      context: Context,
      fn: F,
      thisArg?: unknown,
      ...args: A
    ): ReturnType<F>;
  };
  propagation: {
    inject(context: Context, carrier: Record<string, string>): void;
    extract<C>(context: Context, carrier: C, getter?: TextMapGetter<C>): Context;
  };
  metrics: { getMeter(name: string, version?: string): Meter };
  ROOT_CONTEXT: Context;
}

/** Span kinds and status codes, as the API numbers them. */
export const SpanKind = { INTERNAL: 0, SERVER: 1, CLIENT: 2, PRODUCER: 3, CONSUMER: 4 } as const;
export const StatusError = 2;

let loaded: OtelApi | null | undefined;

/**
 * `@opentelemetry/api` when the application installed it, else null (every instrument is then skipped: no spans, no
 * metrics, no cost but this check). Loaded once, synchronously, on the first instrumented call, never at import.
 */
export function otelApi(): OtelApi | null {
  if (loaded !== undefined) return loaded;
  try {
    loaded = createRequire(import.meta.url)('@opentelemetry/api') as OtelApi;
  } catch {
    loaded = null;
  }
  return loaded;
}
