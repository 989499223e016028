import { kafkaSecurityFromEnvironment } from '../../config/environment.ts';
import { stderrLogger } from '../../observability/logger.ts';
import type { Admin, Consumer, ConsumerOptions, Producer, Transport } from '../port.ts';
import { KafkaAdmin } from './admin.ts';
import { loadKafkaClient } from './client.ts';
import { defaultBrokers, type KafkaTransportOptions, validateKafkaOptions } from './config.ts';
import { KafkaConsumer } from './consumer.ts';
import { clientLogger, clientLogLevels } from './log.ts';
import { KafkaProducer } from './producer.ts';
import { noticingRefusals } from './refusals.ts';
import { kafkaSecurityConfig } from './security.ts';
import { explainBrokerErrors } from './unreachable.ts';

/**
 * The Kafka transport: the engine at scale. Loads the Kafka client (an optional peer dependency) here and only here;
 * without it this throws `EFF_KAFKA_CLIENT_UNAVAILABLE`, saying what to install.
 */
export function kafkaTransport(given: KafkaTransportOptions = {}): Transport {
  // TLS and SASL not given: what the environment says (EFFECTIVELY_KAFKA_*), as KAFKA_BROKERS for the brokers
  const fromEnvironment = given.ssl === undefined && given.sasl === undefined ? kafkaSecurityFromEnvironment() : {};
  const options: KafkaTransportOptions = { ...fromEnvironment, ...given };
  validateKafkaOptions(options);
  const { KafkaJS } = loadKafkaClient();
  const brokers = options.brokers ?? defaultBrokers();
  const rdkafka = options.rdkafka ?? {};
  const level = options.clientLogLevel ?? 'warn';
  // One per transport: the same failure seen by its producer, consumers and admin is one line, not one per client.
  const { logger, refusals } = noticingRefusals(
    clientLogger(options.logger ?? stderrLogger, { level, repeatIntervalMs: options.clientLogIntervalMs ?? 30_000 }),
  );
  const security = kafkaSecurityConfig(options);
  const kafka = (clientId: string) =>
    explainBrokerErrors(
      new KafkaJS.Kafka({
        kafkaJS: { brokers, clientId, logLevel: clientLogLevels[level], logger, ...security.kafkaJS },
        ...security.rdkafka,
      }),
      brokers,
      refusals,
    );
  const baseId = options.clientId ?? 'effectively';
  return {
    name: 'kafka',
    producer: (producerOptions = {}): Producer =>
      new KafkaProducer(kafka(producerOptions.clientId ?? baseId), rdkafka, producerOptions.transactionalId),
    consumer: (consumerOptions: ConsumerOptions): Consumer =>
      new KafkaConsumer(kafka(baseId), consumerOptions, rdkafka, {
        commitIntervalMs: options.commitIntervalMs,
        closeTimeoutMs: options.closeTimeoutMs,
        logger: options.logger ?? stderrLogger,
      }),
    admin: (): Admin => new KafkaAdmin(kafka(baseId), options.replicationFactor),
  };
}
