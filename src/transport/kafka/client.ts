// The one place the Kafka client is loaded. It is CommonJS whose named exports Node's ESM loader cannot detect,
// so it is imported whole and taken apart here.
import client from '@confluentinc/kafka-javascript';

export const { KafkaJS, CODES } = client;
export type Kafka = InstanceType<typeof client.KafkaJS.Kafka>;
