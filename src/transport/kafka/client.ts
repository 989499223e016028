// The one place the Kafka client is loaded, and only when a Kafka transport is made: embedded and offline use
// (`pgliteDb`, `postgresTransport`, `effectively schema check`) never loads it, so it is an optional peer
// dependency with a native module. It is CommonJS whose named exports Node's ESM loader cannot detect, so it is
// required whole (synchronously: `kafkaTransport()` stays synchronous) and taken apart on first use.
import { createRequire } from 'node:module';
import type * as KafkaClient from '@confluentinc/kafka-javascript';
import { kafkaClientPackage, kafkaClientUnavailable, nativeModuleOf } from './client-unavailable.ts';

type ClientModule = typeof KafkaClient;
export type Kafka = InstanceType<ClientModule['KafkaJS']['Kafka']>;

let loaded: ClientModule | undefined;

/** Loads the Kafka client (once); a missing package or a native module that does not load is a coded error. */
export function loadKafkaClient(): ClientModule {
  loaded ??= requireKafkaClient(import.meta.url);
  return loaded;
}

/** Requires the client as a module at `from` would, or throws `EFF_KAFKA_CLIENT_UNAVAILABLE` saying why it cannot. */
export function requireKafkaClient(from: string | URL): ClientModule {
  const require = createRequire(from);
  try {
    return require(kafkaClientPackage) as ClientModule;
  } catch (error) {
    throw kafkaClientUnavailable(error, nativeModuleOf(require));
  }
}

/** A namespace of the client that loads it on first property access (so importing this file loads nothing). */
function onFirstUse<T extends object>(pick: (client: ClientModule) => T): T {
  return new Proxy({} as T, {
    get: (_, property) => Reflect.get(pick(loadKafkaClient()), property),
    has: (_, property) => Reflect.has(pick(loadKafkaClient()), property),
  });
}

export const KafkaJS: ClientModule['KafkaJS'] = onFirstUse((client) => client.KafkaJS);
export const CODES: ClientModule['CODES'] = onFirstUse((client) => client.CODES);
