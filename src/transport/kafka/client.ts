// The one place the Kafka client is loaded, and only when a Kafka transport is made: embedded and offline use
// (`pgliteDb`, `postgresTransport`, `effectively schema check`) never loads it, so it is an optional peer
// dependency with a native module. It is CommonJS whose named exports Node's ESM loader cannot detect, so it is
// required whole (synchronously: `kafkaTransport()` stays synchronous) and taken apart on first use.
import { createRequire } from 'node:module';
import type * as KafkaClient from '@confluentinc/kafka-javascript';
import { EffectivelyError, ErrorCodes } from '../../errors.ts';

type ClientModule = typeof KafkaClient;
export type Kafka = InstanceType<ClientModule['KafkaJS']['Kafka']>;

const packageName = '@confluentinc/kafka-javascript';
let loaded: ClientModule | undefined;

/** Loads the Kafka client (once); a missing package or a native module built for another Node is a coded error. */
export function loadKafkaClient(): ClientModule {
  if (loaded) return loaded;
  try {
    loaded = createRequire(import.meta.url)(packageName) as ClientModule;
  } catch (error) {
    throw kafkaClientUnavailable(error);
  }
  return loaded;
}

const oneLine = (error: unknown) =>
  String((error as Error).message)
    .replace(/\s+/g, ' ')
    .trim();

function kafkaClientUnavailable(error: unknown): EffectivelyError {
  const code = (error as { code?: unknown }).code;
  const missing = code === 'MODULE_NOT_FOUND' && String((error as Error).message).includes(`'${packageName}'`);
  const message = missing
    ? `the Kafka transport needs the package ${packageName}, an optional peer dependency: ` +
      `npm install ${packageName} (a native module; see the README's Install section)`
    : `the Kafka client ${packageName} is installed but could not be loaded (${oneLine(error)}); ` +
      `a native module built for another Node version needs \`npm rebuild ${packageName} --update-binary\` (see the README's Install section)`;
  return new EffectivelyError(ErrorCodes.EFF_KAFKA_CLIENT_UNAVAILABLE, message, {
    cause: error,
    details: { package: packageName, missing, node: process.version },
  });
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
