-- 014_effects_trace_context: the trace an effect was scheduled in (the W3C `traceparent` and `tracestate` headers of
-- the consumer's `process` span, as JSON), so the sender's provider call joins that trace. NULL without OpenTelemetry.
ALTER TABLE :schema.effects ADD COLUMN trace_context jsonb;
