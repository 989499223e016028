// effectively <command> — migrate | relay | topics | dlq | schema | sender | effects | outbox. One file per command;
// this one only dispatches. The operator commands (operator.ts) also run inside an application, on its own Db.
import { pgDb } from '../db/pg.ts';
import { EffectivelyError } from '../errors.ts';
import { parseCommandArgs } from './args.ts';
import { operatorCommand, operatorCommands, operatorUsage } from './operator.ts';
import { printable } from './printable.ts';
import { relayCommand } from './relay.ts';
import { schemaCommand } from './schema.ts';
import { senderCommand } from './sender.ts';
import { topicsCommand } from './topics.ts';

const usage = `usage: effectively <command> [options]      (DATABASE_URL, KAFKA_BROKERS, EFFECTIVELY_SCHEMA)
  --schema s on every command that opens the database: the library's schema (default $EFFECTIVELY_SCHEMA, else
  effectively)
  relay   [--schema s] [--shards n]            publish the outbox to Kafka until SIGINT/SIGTERM
  topics create <topic>... [--partitions n]    create the topics that do not exist yet (default 6 partitions)
  schema check --format avro|json --level L --old f... --new f   offline compatibility check (no database)
  sender  --url u [--schema s] [--kinds a,b] [--rate n] [--concurrency n] [--body envelope|payload] [--lookup]
                                               POST due effects to u (httpProvider) until SIGINT/SIGTERM
${operatorUsage}`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'schema') return schemaCommand(rest); // offline: needs neither a database nor a broker
  if (command === undefined || command === '--help' || command === 'help') {
    console.log(usage);
    return 0;
  }
  if (operatorCommands.has(command)) {
    const db = pgDb();
    try {
      return await operatorCommand(db, argv);
    } finally {
      await db.close();
    }
  }
  if (!['relay', 'sender', 'topics'].includes(command)) {
    console.error(usage);
    return 2;
  }
  let parsed: ReturnType<typeof parseCommandArgs>;
  try {
    parsed = parseCommandArgs(rest);
  } catch (error) {
    console.error(`${command}: ${printable((error as Error).message)}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (command === 'topics')
    return topicsCommand(positionals[0], { topics: positionals.slice(1), partitions: values.partitions });
  const db = pgDb();
  try {
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
    if (!(error instanceof EffectivelyError)) throw error;
    console.error(`effectively: ${error.code}: ${printable(error.message)}`);
    return 1;
  } finally {
    await db.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
