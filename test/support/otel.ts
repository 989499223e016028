// An OpenTelemetry SDK for one test process, as an application registers it: a tracer provider exporting to memory,
// the AsyncLocalStorage context manager, the W3C propagator, and a meter provider read on demand.
import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

export function registerOtel() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const reader = new PeriodicExportingMetricReader({
    exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
    exportIntervalMillis: 3_600_000,
  });
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  return {
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
    /** Every data point recorded so far, by metric name. */
    async metrics(): Promise<Map<string, { attributes: Record<string, unknown>; value: unknown }[]>> {
      const { resourceMetrics } = await reader.collect();
      const out = new Map<string, { attributes: Record<string, unknown>; value: unknown }[]>();
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const metric of scope.metrics) {
          out.set(
            metric.descriptor.name,
            metric.dataPoints.map((point) => ({ attributes: point.attributes, value: point.value })),
          );
        }
      }
      return out;
    },
  };
}
