/** Connection settings for the Kafka transport. `KAFKA_BROKERS` (comma-separated) overrides the default. */
export interface KafkaTransportOptions {
  /** Bootstrap brokers; default `KAFKA_BROKERS` or `127.0.0.1:9092` (not `localhost`: Node resolves it to ::1). */
  brokers?: string[];
  clientId?: string;
  /** Extra librdkafka properties for every client (e.g. security settings). */
  rdkafka?: Record<string, string | number | boolean>;
}

export function defaultBrokers(): string[] {
  const fromEnv = process.env.KAFKA_BROKERS;
  if (fromEnv)
    return fromEnv
      .split(',')
      .map((broker) => broker.trim())
      .filter(Boolean);
  return ['127.0.0.1:9092'];
}
