import { invalidOptions } from '../../errors.ts';
import { stderrLogger } from '../../observability/logger.ts';
import { defaultBrokers } from '../kafka/config.ts';
import type { Admin, Consumer, ConsumerOptions, Producer, Transport } from '../port.ts';
import { PlatformaticAdmin } from './admin.ts';
import { loadPlatformaticClient } from './client.ts';
import { PlatformaticConsumer } from './consumer.ts';
import { type PlatformaticTransportOptions, validatePlatformaticOptions } from './options.ts';
import { PlatformaticProducer } from './producer.ts';

/**
 * Kafka through a pure-JavaScript client (`@platformatic/kafka` 1.x, an optional peer dependency): no native module
 * to build, and CloudEvents binary-mode records read without the native binding's per-header conversion
 * (docs/kafka.md, "Two Kafka transports"). The same brokers, topics and groups as `kafkaTransport`; no transactions
 * (`sendInTransaction`) and no TLS or SASL options yet.
 */
export function platformaticTransport(options: PlatformaticTransportOptions = {}): Transport {
  validatePlatformaticOptions(options);
  const client = loadPlatformaticClient();
  const brokers = options.brokers ?? defaultBrokers();
  const clientId = options.clientId ?? 'effectively';
  const logger = options.logger ?? stderrLogger;
  return {
    name: 'kafka-js',
    producer: (producerOptions = {}): Producer => {
      if (producerOptions.transactionalId !== undefined) {
        throw invalidOptions(
          'transactionalId',
          'not offered by the pure-JavaScript Kafka transport: use kafkaTransport',
        );
      }
      return new PlatformaticProducer(client, { brokers, clientId: producerOptions.clientId ?? clientId });
    },
    consumer: (consumerOptions: ConsumerOptions): Consumer =>
      new PlatformaticConsumer(client, consumerOptions, {
        brokers,
        clientId,
        commitIntervalMs: options.commitIntervalMs,
        logger,
      }),
    admin: (): Admin => new PlatformaticAdmin(client, { brokers, clientId }, options.replicationFactor),
  };
}
