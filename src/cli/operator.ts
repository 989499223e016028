import type { Db } from '../db/port.ts';
import { EffectivelyError } from '../errors.ts';
import { type CommandValues, parseCommandArgs } from './args.ts';
import { dlqCommand } from './dlq.ts';
import { doctorCommand } from './doctor.ts';
import { effectsCommand } from './effects.ts';
import { migrateCommand } from './migrate.ts';
import { outboxCommand } from './outbox.ts';
import { consoleOutput, type Output } from './output.ts';
import { printable } from './printable.ts';
import { operatorUsage } from './usage.ts';

export const operatorCommands = new Set(['migrate', 'dlq', 'effects', 'outbox', 'doctor']);

type Run = (db: Db, action: string | undefined, values: CommandValues, output: Output) => Promise<number>;

const commands: Record<string, Run> = {
  migrate: (db, _action, values, output) => migrateCommand(db, values.schema, output),
  dlq: (db, action, values, output) =>
    dlqCommand(
      db,
      action,
      {
        schema: values.schema,
        consumer: values.consumer,
        topic: values.topic,
        code: values.code,
        status: values.status,
        ids: values.ids,
        limit: values.limit,
        since: values.since,
        until: values.until,
        force: values.force,
        all: values.all,
        transport: values.transport,
        json: values.json,
        dryRun: values['dry-run'],
      },
      output,
    ),
  effects: (db, action, values, output) =>
    effectsCommand(
      db,
      action,
      {
        schema: values.schema,
        status: values.status,
        kind: values.kind,
        ids: values.ids,
        limit: values.limit,
        olderThan: values['older-than'],
        json: values.json,
      },
      output,
    ),
  doctor: (db, _action, values, output) =>
    doctorCommand(db, { ...values, maxLag: values['max-lag'], stuckAfter: values['stuck-after'] }, output),
  outbox: (db, action, values, output) =>
    outboxCommand(db, action, { schema: values.schema, seqs: values.seqs, all: values.all, json: values.json }, output),
};

/**
 * The CLI's operator commands (`migrate`, `dlq`, `effects`, `outbox`) run against a `Db` you hold — how an embedded
 * deployment (PGlite in the application's process, which no second process may open) is operated: wire it to an
 * admin route, a REPL or a signal. `argv` is what would follow `effectively` (`['dlq', 'list', '--json']`); lines go
 * to `output` (default the console; `collectedOutput()` keeps them). Resolves to the exit code the CLI would give:
 * 0 done, 1 a coded error (printed as one line) or nothing found (`dlq show`), 2 a usage error. Never closes `db`.
 */
export async function operatorCommand(
  db: Db,
  argv: readonly string[],
  output: Output = consoleOutput,
): Promise<number> {
  const [command, ...rest] = argv;
  const run = command === undefined ? undefined : commands[command];
  if (!run) {
    output.error(`usage: effectively <command> [options]\n${operatorUsage}`);
    return 2;
  }
  let parsed: ReturnType<typeof parseCommandArgs>;
  try {
    parsed = parseCommandArgs(rest);
  } catch (error) {
    output.error(`${command}: ${printable((error as Error).message)}`);
    return 2;
  }
  try {
    return await run(db, parsed.positionals[0], parsed.values, output);
  } catch (error) {
    // a coded error (a schema never migrated, a broker down) is one line that says what to do, not a stack
    if (!(error instanceof EffectivelyError)) throw error;
    output.error(`effectively: ${error.code}: ${printable(error.message)}`);
    return 1;
  }
}
