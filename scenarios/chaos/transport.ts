import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { platformaticTransport } from '../../src/transport/platformatic/transport.ts';
import type { Transport } from '../../src/transport/port.ts';
import type { ChaosConfig } from './config.ts';

/** The Kafka transport a chaos child runs on (`--transport kafka|kafka-js`). */
export function chaosTransport(config: ChaosConfig, clientId: string): Transport {
  return config.transport === 'kafka-js' ? platformaticTransport({ clientId }) : kafkaTransport({ clientId });
}
