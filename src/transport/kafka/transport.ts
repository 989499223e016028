import type { Admin, Consumer, ConsumerOptions, Producer, Transport } from '../port.ts';
import { KafkaAdmin } from './admin.ts';
import { KafkaJS } from './client.ts';
import { defaultBrokers, type KafkaTransportOptions } from './config.ts';
import { KafkaConsumer } from './consumer.ts';
import { KafkaProducer } from './producer.ts';

/** The Kafka transport: the engine at scale. */
export function kafkaTransport(options: KafkaTransportOptions = {}): Transport {
  const brokers = options.brokers ?? defaultBrokers();
  const rdkafka = options.rdkafka ?? {};
  const kafka = (clientId: string) =>
    new KafkaJS.Kafka({ kafkaJS: { brokers, clientId, logLevel: KafkaJS.logLevel.ERROR } });
  const baseId = options.clientId ?? 'effectively';
  return {
    name: 'kafka',
    producer: (producerOptions = {}): Producer =>
      new KafkaProducer(kafka(producerOptions.clientId ?? baseId), rdkafka, producerOptions.transactionalId),
    consumer: (consumerOptions: ConsumerOptions): Consumer =>
      new KafkaConsumer(kafka(baseId), consumerOptions, rdkafka),
    admin: (): Admin => new KafkaAdmin(kafka(baseId)),
  };
}
