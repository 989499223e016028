// The public API of effectively. Nothing else is public.

// backpressure
export {
  type CircuitBreaker,
  type CircuitBreakerOptions,
  type CircuitPermit,
  type CircuitState,
  type CircuitStateChange,
  createCircuitBreaker,
} from './backpressure/circuit-breaker.ts';
export { type ConsumerLag, consumerLag, type PartitionLag } from './backpressure/lag.ts';
export {
  type BackpressureMetrics,
  type BackpressureMetricsOptions,
  type BackpressureSnapshot,
  backpressureMetrics,
} from './backpressure/metrics.ts';
export { type Pausable, type PauseWhileOpenOptions, pauseWhileOpen } from './backpressure/pause-while-open.ts';
export { createRateLimiter, type RateLimiter, type RateLimiterOptions } from './backpressure/rate-limiter.ts';
// operator commands (the CLI's migrate / dlq / effects / outbox, in the application's own process)
export { operatorCommand } from './cli/operator.ts';
export { collectedOutput, type Output } from './cli/output.ts';
// console: the operator's web page and its JSON API (docs/console.md)
export type { ConsoleAuthenticate, ConsoleRole, ConsoleUser } from './console/auth.ts';
export { type ConsoleOptions, createConsole, type EffectivelyConsole } from './console/console.ts';
export type { Route as ConsoleRoute, RouteContext as ConsoleRouteContext } from './console/http.ts';
// consumer
export { type ConsumerOptions, createConsumer, type EffectivelyConsumer } from './consumer/consumer.ts';
export type { Concurrency } from './consumer/lanes.ts';
export { ledgerEntry, upsert, versionGuard } from './consumer/patterns.ts';
export { type PurgeOptions, purgeProcessed } from './consumer/retention.ts';
export {
  deadLetterTopicName,
  RetryHeaders,
  type RetryTopicsOptions,
  retryTopicName,
} from './consumer/retry-topics.ts';
export type {
  BatchEventHandler,
  BatchHandlerContext,
  EventHandler,
  HandlerContext,
  Outcome,
} from './consumer/types.ts';
export type { ConsumerStats } from './consumer/watch.ts';
// db
export { type MigrateOptions, type MigrateResult, migrate } from './db/migrate.ts';
export { defaultDatabaseUrl, type PgDbOptions, pgDb } from './db/pg.ts';
export { type EmbeddedDb, type PgliteDbOptions, pgliteDb } from './db/pglite.ts';
export type { Db, Queryable } from './db/port.ts';
export { isConnectionLost, isTransientDbError, sqlState } from './db/sqlstate.ts';
// dead letters
export {
  createDeadLetterAlerts,
  type DeadLetterAlert,
  type DeadLetterAlerts,
  type DeadLetterAlertsOptions,
} from './deadletter/alerts.ts';
export {
  type DeadLetter,
  type DeadLetterFilter,
  type DeadLetterStatus,
  type DeadLetterStore,
  deadLetterStore,
} from './deadletter/store.ts';
// effects (scheduled in the handler's transaction, performed by a sender)
export { type HttpProvider, type HttpProviderOptions, httpProvider } from './effects/http-provider.ts';
export {
  createEffects,
  type Effect,
  type EffectFilter,
  type EffectStatus,
  type Effects,
  type EffectsOptions,
  type ScheduleInput,
} from './effects/ledger.ts';
export {
  type EffectLookup,
  type EffectProvider,
  type PendingEffect,
  type ProviderCallContext,
  ProviderError,
  type ProviderErrorOptions,
  type ProviderFailure,
  type ProviderResult,
} from './effects/provider.ts';
export {
  createSender,
  type Sender,
  type SenderFaultPoint,
  type SenderOptions,
  type SenderStats,
} from './effects/sender.ts';
// envelope
export {
  type ContentMode,
  type ContentModes,
  dataContentTypeOf,
  decodeEvent,
  encodeEvent,
  encodeEventAs,
  eventIdOfRecord,
  eventKeyOfRecord,
  eventSourceOfRecord,
  modeFor,
} from './envelope/cloudevents.ts';
export { createEvent, type Event, type NewEvent } from './envelope/event.ts';
export { dedupKey, dedupKeyOf, isSelfKeyedUuid } from './envelope/identity.ts';
export { type DataEncoding, structuredContentType } from './envelope/structured.ts';
export { isUuid, uuidv7 } from './envelope/uuidv7.ts';
// errors
export {
  EffectivelyError,
  type ErrorCode,
  ErrorCodes,
  PermanentError,
  TransientError,
} from './errors.ts';
export type { CloseOptions } from './lifecycle.ts';
export type { FaultInjector, FaultPoint } from './observability/faults.ts';
export { type Logger, silentLogger, stderrLogger } from './observability/logger.ts';
export {
  type MetricsHandlerOptions,
  metricsHandler,
  type PrometheusOptions,
  prometheusMetrics,
} from './observability/prometheus.ts';
export {
  type MetricFamily,
  prometheusContentType,
  renderPrometheus,
  type Sample as PrometheusSample,
} from './observability/prometheus-text.ts';
// outbox
export { createOutbox, type Outbox, type OutboxOptions } from './outbox/outbox.ts';
export {
  countRefused,
  discardRefused,
  listRefused,
  type RefusedOptions,
  type RefusedRow,
  type RefusedSelection,
  retryRefused,
} from './outbox/refused.ts';
export { createRelay, type RefusedEvent, type Relay, type RelayOptions } from './outbox/relay.ts';
export type { WalOptions } from './outbox/relay-options.ts';
export type { RelayStats, WalStats } from './outbox/relay-stats.ts';
export { changeShards } from './outbox/shards-setting.ts';
export { dropWalSlot } from './outbox/wal/slot.ts';
// pipeline: Kafka→Kafka exactly once (docs/transactions.md)
export { createPipeline } from './pipeline/pipeline.ts';
export type {
  Pipeline,
  PipelineFailure,
  PipelineFaultInjector,
  PipelineFaultPoint,
  PipelineGuarantee,
  PipelineOptions,
  PipelineOutput,
  PipelineRecord,
  PipelineStats,
  Transform as PipelineTransform,
} from './pipeline/types.ts';
// schema: offline compatibility checks
export {
  type CompatibilityInput,
  type CompatibilityResult,
  checkCompatibility,
  type Level as CompatibilityCheckLevel,
  type Violation,
  validateSchema,
} from './schema/compat/index.ts';
// schema: registry and serdes
export { type HttpSchemaRegistryOptions, httpSchemaRegistry } from './schema/registry/http.ts';
export {
  type SchemaRegistryServer,
  type SchemaRegistryServerOptions,
  serveSchemaRegistry,
} from './schema/registry/http-server.ts';
export type {
  CompatibilityLevel,
  SchemaFormat,
  SchemaInput,
  SchemaReference,
  SchemaRegistry,
  StoredSchema,
  SubjectVersion,
} from './schema/registry/port.ts';
export { type PostgresSchemaRegistryOptions, postgresSchemaRegistry } from './schema/registry/postgres.ts';
export { avroSerde } from './schema/serde/avro.ts';
export { decodeEventWith, encodeEventWith, encodingOf, type SerdeEncoding } from './schema/serde/envelope.ts';
export { jsonSchemaSerde } from './schema/serde/json.ts';
export { type ProtobufSerdeOptions, protobufSerde } from './schema/serde/protobuf.ts';
export type { Serde, SerdeOptions } from './schema/serde/serde.ts';
export type { SubjectStrategy } from './schema/serde/subject.ts';
// schema: topic versioning
export {
  declareTopicVersion,
  enqueueVersioned,
  expandForVersions,
  type TopicPhase,
  type TopicVersion,
  type TopicVersionInput,
  type Upcast,
  type Upcaster,
  upcastBatchOnRead,
  upcastOnRead,
  upcastOnReadEvent,
  versionExpander,
} from './schema/versioning/index.ts';
export type { KafkaTransportOptions } from './transport/kafka/config.ts';
export type { KafkaOAuthToken, KafkaSasl, KafkaSsl } from './transport/kafka/security.ts';
// transport
export { kafkaTransport } from './transport/kafka/transport.ts';
export type { PlatformaticTransportOptions } from './transport/platformatic/options.ts';
export { platformaticTransport } from './transport/platformatic/transport.ts';
export type * from './transport/port.ts';
export { positionAfter } from './transport/position.ts';
export type { PostgresTransportOptions } from './transport/postgres/options.ts';
export { postgresTransport } from './transport/postgres/transport.ts';
