// Why the Kafka client did not load, told apart: each case has its own way out. The usual one under npm 11's script
// policy (`allowScripts`), `--ignore-scripts` or another package manager's build approval is a package installed
// whose install script never ran (or failed): no native module was ever built, and rebuilding for another Node would
// not help.
import { existsSync } from 'node:fs';
import type { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { EffectivelyError, ErrorCodes } from '../../errors.ts';

export const kafkaClientPackage = '@confluentinc/kafka-javascript';

/** Where the client's install script puts its native module (its package.json's `binary.module_path`). */
const nativeModule = 'build/Release/confluent-kafka-javascript.node';

/**
 * - `missing`: the package is not installed.
 * - `not-built`: installed, but its native module was never built (the install script did not run, or failed).
 * - `other-node`: the native module was built for another Node version (another `NODE_MODULE_VERSION`).
 * - `load-failed`: the native module is there and does not load for another reason (a system library missing...).
 */
export type KafkaClientFailure = 'missing' | 'not-built' | 'other-node' | 'load-failed';

const oneLine = (error: unknown) =>
  String((error as Error)?.message)
    .replace(/\s+/g, ' ')
    .trim();

/** The client's native module as the require that failed would find it, or undefined when the package is not there. */
export function nativeModuleOf(
  require: ReturnType<typeof createRequire>,
): { path: string; built: boolean } | undefined {
  try {
    const path = join(dirname(require.resolve(`${kafkaClientPackage}/package.json`)), nativeModule);
    return { path, built: existsSync(path) };
  } catch {
    return undefined;
  }
}

/** Tells the failures apart from the loader's error and whether the native module file exists. */
export function kafkaClientFailure(error: unknown, native: { built: boolean } | undefined): KafkaClientFailure {
  const code = (error as { code?: unknown })?.code;
  if (native === undefined || (code === 'MODULE_NOT_FOUND' && oneLine(error).includes(`'${kafkaClientPackage}'`))) {
    return 'missing';
  }
  if (!native.built) return 'not-built';
  return /NODE_MODULE_VERSION/.test(oneLine(error)) ? 'other-node' : 'load-failed';
}

const rebuild = `CKJS_LINKING=dynamic npm rebuild ${kafkaClientPackage}`;

function explain(failure: KafkaClientFailure, error: unknown, path: string | undefined): string {
  switch (failure) {
    case 'missing':
      return (
        `the Kafka transport needs the package ${kafkaClientPackage}, an optional peer dependency: ` +
        `npm install ${kafkaClientPackage} (a native module; see docs/kafka.md, "Installing the client")`
      );
    case 'not-built':
      return (
        `the Kafka client ${kafkaClientPackage} is installed but its native module was never built (no ${path}): ` +
        'its install script did not run (a package your package.json does not list in `allowScripts`, where npm ' +
        'enforces that policy; `--ignore-scripts`; another package manager asks you to approve builds) or it failed. ' +
        'Allow the script, then ' +
        `\`${rebuild}\` (a build from source; see docs/kafka.md, "Installing the client")`
      );
    case 'other-node':
      return (
        `the Kafka client ${kafkaClientPackage} was built for another Node version than this one (${process.version}): ` +
        `${oneLine(error)}; rebuild it with \`${rebuild} --update-binary\` (see docs/kafka.md, "Installing the client")`
      );
    case 'load-failed':
      return (
        `the Kafka client ${kafkaClientPackage} is built (${path}) but its native module does not load ` +
        `(${oneLine(error)}): a system library it was linked against may be missing; rebuild it with ` +
        `\`${rebuild} --update-binary\` (see docs/kafka.md, "Installing the client")`
      );
  }
}

/** The coded error for a client that did not load; `details.reason` names the case. */
export function kafkaClientUnavailable(error: unknown, native: { path: string; built: boolean } | undefined) {
  const reason = kafkaClientFailure(error, native);
  return new EffectivelyError(ErrorCodes.EFF_KAFKA_CLIENT_UNAVAILABLE, explain(reason, error, native?.path), {
    cause: error,
    details: { package: kafkaClientPackage, reason, missing: reason === 'missing', node: process.version },
  });
}
