// effectively <command> — migrate | relay | topics | dlq | schema | sender | effects | outbox. One file per command;
// this one only dispatches: help, version, the database line, the refusal of an implicit database, errors as one line.
// The operator commands (operator.ts) also run inside an application, on its own Db.
import { readFileSync } from 'node:fs';
import { loadConfigFile } from '../config/environment.ts';
import { pgDb } from '../db/pg.ts';
import type { Db } from '../db/port.ts';
import { databaseUnreachable } from '../db/unreachable.ts';
import { EffectivelyError, invalidOptions } from '../errors.ts';
import { type CommandValues, parseCommandArgs } from './args.ts';
import { consoleCommand } from './console.ts';
import { type CliDatabase, changesDatabase, cliDatabase, databaseLine, refuseImplicit } from './database.ts';
import { operatorCommand, operatorCommands } from './operator.ts';
import { printable } from './printable.ts';
import { relayCommand } from './relay.ts';
import { schemaCommand } from './schema.ts';
import { senderCommand } from './sender.ts';
import { topicsCommand } from './topics.ts';
import { commandUsage, usage } from './usage.ts';

/** The package's version (package.json is two levels up from this file, in the sources and in dist/ alike). */
function version(): string {
  const file = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

/** A command that opens the database: the line saying which, the refusal of an implicit one, and one-line errors. */
async function onDatabase(
  command: string,
  argv: string[],
  values: CommandValues,
  action: string | undefined,
): Promise<number> {
  const database: CliDatabase = cliDatabase();
  console.error(databaseLine(database, values.schema));
  let db: Db | undefined;
  try {
    if (changesDatabase(command, action, values['dry-run'] || (command === 'console' && values['read-only'])))
      refuseImplicit(database, `${command} ${action ?? ''}`.trim());
    db = pgDb({ connectionString: database.url });
    if (operatorCommands.has(command)) return await operatorCommand(db, argv);
    if (command === 'console')
      return await consoleCommand(db, {
        schema: values.schema,
        host: values.host,
        port: values.port,
        transport: values.transport,
        topic: values.topic,
        readOnly: values['read-only'],
      });
    if (command === 'relay') {
      await relayCommand(db, values.schema, values.shards ? Number(values.shards) : undefined);
      return 0;
    }
    return await senderCommand(db, {
      schema: values.schema,
      url: values.url,
      kinds: values.kinds,
      rate: values.rate,
      concurrency: values.concurrency,
      body: values.body,
      lookup: values.lookup,
    });
  } catch (error) {
    const coded = databaseUnreachable(error, database.label) ?? error;
    if (!(coded instanceof EffectivelyError)) throw error;
    console.error(`effectively: ${coded.code}: ${printable(coded.message)}`);
    return 1;
  } finally {
    await db?.close();
  }
}

/**
 * `--config <file>` (anywhere on the line): the file's settings become the environment variables they stand for,
 * those already set winning. Returns the arguments without it, and `--schema` added when only the file names one.
 */
function applyConfig(argv: string[]): string[] {
  const at = argv.findIndex((arg) => arg === '--config' || arg.startsWith('--config='));
  if (at < 0) return argv;
  const path = argv[at]!.startsWith('--config=') ? argv[at]!.slice('--config='.length) : argv[at + 1];
  if (!path) throw invalidOptions('config', 'needs a file: --config <file>');
  const rest = argv.filter((_, index) => index !== at && !(index === at + 1 && argv[at] === '--config'));
  const fromFile = loadConfigFile(path);
  for (const [name, value] of Object.entries(fromFile)) if (process.env[name] === undefined) process.env[name] = value;
  const schema = process.env.EFFECTIVELY_SCHEMA;
  // `schema check` has no --schema; the other commands read it (its default was taken before the file was read)
  const named = rest[0] === 'schema' || rest.some((arg) => arg === '--schema' || arg.startsWith('--schema='));
  return schema !== undefined && fromFile.EFFECTIVELY_SCHEMA === schema && !named
    ? [...rest, '--schema', schema]
    : rest;
}

async function main(given: string[]): Promise<number> {
  let argv: string[];
  try {
    argv = applyConfig(given);
  } catch (error) {
    if (!(error instanceof EffectivelyError)) throw error;
    console.error(`effectively: ${error.code}: ${printable(error.message)}`);
    return 2;
  }
  const [command, ...rest] = argv;
  if (command === '--version' || command === '-v' || command === 'version') {
    console.log(version());
    return 0;
  }
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    console.log(usage);
    return 0;
  }
  const own = commandUsage[command];
  if (own === undefined) {
    console.error(`effectively: unknown command \`${printable(command)}\` (effectively --help lists them)\n${usage}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(`usage: effectively\n${own}`);
    return 0;
  }
  if (command === 'schema') return schemaCommand(rest); // offline: needs neither a database nor a broker
  let parsed: ReturnType<typeof parseCommandArgs>;
  try {
    parsed = parseCommandArgs(rest);
  } catch (error) {
    console.error(`${command}: ${printable((error as Error).message)} (effectively ${command} --help)`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (command === 'topics') {
    try {
      return await topicsCommand(positionals[0], { topics: positionals.slice(1), partitions: values.partitions });
    } catch (error) {
      if (!(error instanceof EffectivelyError)) throw error;
      console.error(`effectively: ${error.code}: ${printable(error.message)}`);
      return 1;
    }
  }
  return onDatabase(command, argv, values, positionals[0]);
}

process.exitCode = await main(process.argv.slice(2));
