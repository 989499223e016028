// effectively <command> — migrate | relay | topics | dlq | schema | sender | effects. One file per command; this one only
// dispatches.
import { parseArgs } from 'node:util';
import { pgDb } from '../db/pg.ts';
import { EffectivelyError } from '../errors.ts';
import { dlqCommand } from './dlq.ts';
import { effectsCommand } from './effects.ts';
import { migrateCommand } from './migrate.ts';
import { printable } from './printable.ts';
import { relayCommand } from './relay.ts';
import { schemaCommand } from './schema.ts';
import { senderCommand } from './sender.ts';
import { topicsCommand } from './topics.ts';

const usage = `usage: effectively <command> [options]      (DATABASE_URL, KAFKA_BROKERS)
  migrate [--schema s]                         apply the library's migrations
  relay   [--schema s] [--shards n]            publish the outbox to Kafka until SIGINT/SIGTERM
  topics create <topic>... [--partitions n]    create the topics that do not exist yet (default 6 partitions)
  schema check --format avro|json --level L --old f... --new f   offline compatibility check (no database)
  dlq list|show|redrive|discard [filters]      dead letters: --consumer --topic --code --ids --status --since
                                               --until --limit, --transport kafka|postgres (redrive), --dry-run,
                                               --force (redrive beyond the dedup retention), --json;
                                               redrive with no filter asks for --all
  sender  --url u [--schema s] [--kinds a,b] [--rate n] [--concurrency n] [--body envelope|payload] [--lookup]
                                               POST due effects to u (httpProvider) until SIGINT/SIGTERM
  effects list [--status s] [--kind k] [--limit n] [--json] | revive --ids a,b | cancel --ids a,b
          | purge --older-than 30d             the effects ledger (purge: done and cancelled effects)`;

const [command, ...rest] = process.argv.slice(2);
if (command === 'schema') process.exit(schemaCommand(rest)); // offline: needs neither a database nor a broker
const { values, positionals } = parseArgs({
  args: rest,
  allowPositionals: true,
  options: {
    schema: { type: 'string', default: 'effectively' },
    shards: { type: 'string' },
    partitions: { type: 'string' },
    consumer: { type: 'string' },
    topic: { type: 'string' },
    code: { type: 'string' },
    status: { type: 'string' },
    ids: { type: 'string' },
    limit: { type: 'string' },
    since: { type: 'string' },
    until: { type: 'string' },
    force: { type: 'boolean', default: false },
    all: { type: 'boolean', default: false },
    transport: { type: 'string', default: 'kafka' },
    json: { type: 'boolean', default: false },
    'dry-run': { type: 'boolean', default: false },
    url: { type: 'string' },
    kinds: { type: 'string' },
    kind: { type: 'string' },
    'older-than': { type: 'string' },
    rate: { type: 'string' },
    concurrency: { type: 'string' },
    body: { type: 'string' },
    lookup: { type: 'boolean', default: false },
  },
});

const db = pgDb();
try {
  if (command === 'migrate') await migrateCommand(db, values.schema);
  else if (command === 'relay')
    await relayCommand(db, values.schema, values.shards ? Number(values.shards) : undefined);
  else if (command === 'dlq') {
    process.exitCode = await dlqCommand(db, positionals[0], {
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
    });
  } else if (command === 'sender') {
    process.exitCode = await senderCommand(db, {
      schema: values.schema,
      url: values.url,
      kinds: values.kinds,
      rate: values.rate,
      concurrency: values.concurrency,
      body: values.body,
      lookup: values.lookup,
    });
  } else if (command === 'topics') {
    process.exitCode = await topicsCommand(positionals[0], {
      topics: positionals.slice(1),
      partitions: values.partitions,
    });
  } else if (command === 'effects') {
    process.exitCode = await effectsCommand(db, positionals[0], {
      schema: values.schema,
      status: values.status,
      kind: values.kind,
      ids: values.ids,
      limit: values.limit,
      olderThan: values['older-than'],
      json: values.json,
    });
  } else {
    console.error(usage);
    process.exitCode = command ? 2 : 0;
  }
} catch (error) {
  // a coded error (a schema never migrated, a broker down) is one line that says what to do, not a stack
  if (!(error instanceof EffectivelyError)) throw error;
  console.error(`effectively: ${error.code}: ${printable(error.message)}`);
  process.exitCode = 1;
} finally {
  await db.close();
}
