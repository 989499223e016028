// A broker that cannot be reached is an everyday error (not started yet, KAFKA_BROKERS unset, a typo): the client
// rejects `connect()` after its 30 s timeout with a bare `KafkaJSError: broker transport failure`, and an admin call
// with `Local: Timed out` after 5 s. Here each becomes one coded line: what was tried, against which brokers, what to do.
// When the client logged that a broker refused the login or the TLS handshake, the line says that instead.
import { EffectivelyError, ErrorCodes } from '../../errors.ts';
import type { Kafka } from './client.ts';
import type { ConnectionRefusals } from './refusals.ts';

/** librdkafka's codes for "nobody answered": transport failure, timed out, all brokers down, resolve failure. */
const unreachableCodes = new Set([-195, -185, -187, -193]);

/** Whether the client's `error` says no broker answered (an aggregate: every one of its errors says so). */
export function looksUnreachable(error: unknown): boolean {
  const e = error as { code?: unknown; name?: unknown; message?: unknown; errors?: unknown };
  if (Array.isArray(e.errors) && e.errors.length > 0) return e.errors.every(looksUnreachable);
  return (
    unreachableCodes.has(e.code as number) ||
    e.name === 'KafkaJSConnectionError' ||
    /broker transport failure|all broker connections are down|timed out/i.test(String(e.message ?? ''))
  );
}

/** One coded error for a failed call of the Kafka client: `EFF_BROKER_UNREACHABLE` when no broker answered. */
export function brokerError(
  error: unknown,
  brokers: readonly string[],
  what: string,
  refusals?: ConnectionRefusals,
): EffectivelyError {
  if (error instanceof EffectivelyError) return error;
  const refused = looksUnreachable(error) ? refusals?.recent() : undefined;
  if (refused !== undefined) {
    return new EffectivelyError(
      ErrorCodes.EFF_TRANSPORT,
      `the Kafka brokers at ${brokers.join(',')} refused the connection (${refused}) to ${what}: check the ` +
        'credentials and TLS settings (kafkaTransport({ sasl, ssl }))',
      { cause: error, retryable: true, details: { brokers: [...brokers], reason: 'refused' } },
    );
  }
  const inner = (error as { errors?: unknown }).errors;
  const said = (Array.isArray(inner) && inner.length > 0 ? inner : [error])
    .map((each) => String((each as Error)?.message ?? each).replace(/\s+/g, ' '))
    .join('; ');
  if (!looksUnreachable(error))
    return new EffectivelyError(ErrorCodes.EFF_TRANSPORT, `Kafka ${what} failed at ${brokers.join(',')}: ${said}`, {
      cause: error,
      retryable: true,
      details: { brokers: [...brokers] },
    });
  return new EffectivelyError(
    ErrorCodes.EFF_BROKER_UNREACHABLE,
    `no Kafka broker answered at ${brokers.join(',')} (${said}) to ${what}: start the broker, or point ` +
      'KAFKA_BROKERS (kafkaTransport({ brokers })) at a running one',
    { cause: error, retryable: true, details: { brokers: [...brokers] } },
  );
}

/**
 * Patches `client`'s methods `names` (own properties over the prototype's: no proxy, the client's private fields stay
 * reachable) so their promises reject with `brokerError`: every failure when `all`, else only when no broker answered
 * (other refusals, a topic that exists say, stay the client's for the caller to read).
 */
function explained<T extends object>(
  client: T,
  brokers: readonly string[],
  what: string,
  names: string[],
  all: boolean,
  refusals: ConnectionRefusals | undefined,
): T {
  const methods = client as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const name of names) {
    const method = methods[name];
    if (typeof method !== 'function') continue;
    methods[name] = (...args) =>
      method.apply(client, args).catch((error: unknown) => {
        if (!all && !looksUnreachable(error)) throw error;
        throw brokerError(error, brokers, all ? what : `${what} (${name})`, refusals);
      });
  }
  return client;
}

const adminCalls = [
  'createTopics',
  'listTopics',
  'deleteTopics',
  'fetchOffsets',
  'fetchTopicOffsets',
  'fetchTopicMetadata',
];

/**
 * The client with its connections explained: a producer's or consumer's `connect()`, and every call of an admin
 * (which connects lazily and fails on its first request), reject with a coded error naming the brokers.
 */
export function explainBrokerErrors(kafka: Kafka, brokers: readonly string[], refusals?: ConnectionRefusals): Kafka {
  return {
    producer: (config) => explained(kafka.producer(config), brokers, 'connect a producer', ['connect'], true, refusals),
    consumer: (config) => explained(kafka.consumer(config), brokers, 'connect a consumer', ['connect'], true, refusals),
    admin: (config) => explained(kafka.admin(config), brokers, 'run an admin request', adminCalls, false, refusals),
  } as Kafka;
}
