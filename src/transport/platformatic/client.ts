// The one place the pure-JavaScript Kafka client is loaded, and only when its transport is made: it is an optional
// peer dependency, so importing the library never needs it. Required synchronously (`platformaticTransport()` stays
// synchronous, as `kafkaTransport()` is); Node 20.19+ requires an ES module this way.
import { createRequire } from 'node:module';
import type * as PlatformaticKafka from '@platformatic/kafka';
import { EffectivelyError, ErrorCodes } from '../../errors.ts';

export type ClientModule = typeof PlatformaticKafka;
export const platformaticPackage = '@platformatic/kafka';

let loaded: ClientModule | undefined;

/** Loads the client (once), or throws `EFF_KAFKA_CLIENT_UNAVAILABLE` saying what to install. */
export function loadPlatformaticClient(): ClientModule {
  if (loaded) return loaded;
  try {
    loaded = createRequire(import.meta.url)(platformaticPackage) as ClientModule;
    return loaded;
  } catch (error) {
    const missing = (error as { code?: unknown })?.code === 'MODULE_NOT_FOUND';
    throw new EffectivelyError(
      ErrorCodes.EFF_KAFKA_CLIENT_UNAVAILABLE,
      missing
        ? `the pure-JavaScript Kafka transport needs the package ${platformaticPackage} (1.x), an optional peer ` +
            `dependency: npm install ${platformaticPackage}@1 (see docs/kafka.md, "Two Kafka transports")`
        : `the Kafka client ${platformaticPackage} did not load: ${String((error as Error)?.message)}`,
      {
        cause: error,
        details: {
          package: platformaticPackage,
          reason: missing ? 'missing' : 'load-failed',
          missing,
          node: process.version,
        },
      },
    );
  }
}
