import { type Kafka, KafkaJS } from '../transport/kafka/client.ts';
import { clientLogger, clientLogLevels } from '../transport/kafka/log.ts';
import { kafkaSecurityConfig } from '../transport/kafka/security.ts';
import type { PipelineSettings } from './options.ts';

export type ClientConsumer = ReturnType<Kafka['consumer']>;
export type ClientProducer = ReturnType<Kafka['producer']>;

export function pipelineKafka(settings: PipelineSettings): Kafka {
  const level = settings.kafka.clientLogLevel ?? 'warn';
  const logger = clientLogger(settings.kafka.logger ?? settings.logger, {
    level,
    repeatIntervalMs: settings.kafka.clientLogIntervalMs ?? 30_000,
  });
  const clientId = settings.kafka.clientId ?? `effectively-pipeline-${settings.transactionalId}`;
  const security = kafkaSecurityConfig(settings.kafka);
  return new KafkaJS.Kafka({
    kafkaJS: { brokers: settings.brokers, clientId, logLevel: clientLogLevels[level], logger, ...security.kafkaJS },
    ...security.rdkafka,
  });
}

/**
 * The consumer: read_committed (an aborted copy of an upstream transaction is never an input), no auto commit, and
 * static membership under the transactional id, so a restarted instance takes its partitions back at once.
 */
export function pipelineConsumer(kafka: Kafka, settings: PipelineSettings): ClientConsumer {
  return kafka.consumer({
    kafkaJS: { groupId: settings.group, fromBeginning: settings.fromBeginning, autoCommit: false },
    'isolation.level': 'read_committed',
    'group.instance.id': settings.transactionalId,
    'session.timeout.ms': settings.sessionTimeoutMs,
    'heartbeat.interval.ms': Math.max(500, Math.floor(settings.sessionTimeoutMs / 6)),
    'js.consumer.max.batch.size': settings.maxBatchSize,
    'fetch.wait.max.ms': 50,
    ...settings.kafka.rdkafka,
  });
}

/**
 * Exactly-once: a transactional producer (its `connect` runs initTransactions, which fences any older producer with
 * the same id and finishes its open transaction). At-least-once: the same producer without the transactional id.
 */
export function pipelineProducer(kafka: Kafka, settings: PipelineSettings): ClientProducer {
  const transactional = settings.guarantee === 'exactly-once';
  return kafka.producer({
    kafkaJS: {
      idempotent: true,
      acks: -1,
      ...(transactional
        ? { transactionalId: settings.transactionalId, transactionTimeout: settings.transactionTimeoutMs }
        : {}),
    },
    'linger.ms': 5,
    // What the library's own producer allows (the client's default is 1,000,000 bytes): the broker or the topic decides
    // what is too large, and a refusal of one input's write is bisected down to that input's dead letter.
    'message.max.bytes': 16 * 1024 * 1024,
    ...settings.kafka.rdkafka,
  });
}
