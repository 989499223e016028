/**
 * The effect hop: the sender's `effect <kind>` span (CLIENT) around a provider call (and its lookup), a child of the
 * trace the effect was scheduled in (the consumer's `process` span), so the call to the outside world closes the trace.
 */
import type { Context, OtelApi, Span } from './otel-api.ts';
import { otelApi, SpanKind } from './otel-api.ts';
import { effectAttributes, spanNames } from './semconv.ts';
import { contextOfHeaders, endSpan, startSpan, withSpan } from './tracing.ts';

export interface EffectSpan {
  /** Runs the provider's call with the span active (an instrumented HTTP client nests under it). */
  run<T>(fn: () => Promise<T>): Promise<T>;
  /** Ends the span, as failed when `error` is given. */
  end(error?: unknown): void;
}

class ActiveEffectSpan implements EffectSpan {
  constructor(
    private readonly api: OtelApi,
    private readonly parent: Context,
    private readonly span: Span,
  ) {}
  run<T>(fn: () => Promise<T>): Promise<T> {
    return withSpan(this.api, this.parent, this.span, fn);
  }
  end(error?: unknown): void {
    endSpan(this.span, error);
  }
}

/** The span of one claimed effect's call; undefined without the API. */
export function startEffectSpan(effect: {
  id: string;
  key: string;
  kind: string;
  attempts: number;
  traceContext: Record<string, string> | null;
}): EffectSpan | undefined {
  const api = otelApi();
  if (!api) return undefined;
  const parent = effect.traceContext ? contextOfHeaders(api, effect.traceContext) : api.ROOT_CONTEXT;
  const span = startSpan(api, spanNames.effect(effect.kind), SpanKind.CLIENT, parent, () => effectAttributes(effect));
  return new ActiveEffectSpan(api, parent, span);
}
