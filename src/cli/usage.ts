// What `effectively --help` and `effectively <command> --help` print: one entry per command, the whole usage is
// their concatenation, so the two never disagree.
import { levels } from '../schema/compat/levels.ts';

/** Each command's usage, as `effectively <command> --help` prints it. */
export const commandUsage: Record<string, string> = {
  migrate: `  migrate [--schema s]                         apply the library's migrations`,
  relay: `  relay   [--schema s] [--shards n]            publish the outbox to Kafka until SIGINT/SIGTERM`,
  topics: `  topics create <topic>... [--partitions n]    create the topics that do not exist yet (default 6 partitions);
                                               says which it created, which existed, and a partition count
                                               that differs`,
  schema: `  schema check --format avro|json|protobuf --level L --old f... --new f   offline compatibility check (no database);
                                               L: ${levels.join(', ').toLowerCase()} (any case)`,
  sender: `  sender  --url u [--schema s] [--kinds a,b] [--rate n] [--concurrency n] [--body envelope|payload] [--lookup]
                                               POST due effects to u (httpProvider) until SIGINT/SIGTERM`,
  dlq: `  dlq list|show|redrive|discard [filters]      dead letters: --consumer --topic --code --ids --status --since
                                               --until --limit, --dry-run, --json; redrive: --transport
                                               kafka|postgres (an embedded db: its own log; a server: say
                                               which), --status redriven (again), --force (beyond the dedup
                                               retention), --all (no filter)`,
  effects: `  effects list [--status s] [--kind k] [--limit n] [--json] | revive --ids a,b | cancel --ids a,b
          | purge --older-than 30d             the effects ledger (purge: done and cancelled effects)`,
  outbox: `  outbox refused [--json] | retry --seqs a,b|--all | discard --seqs a,b
                                               outbox rows the transport refused for good`,
  doctor: `  doctor [--transport kafka|postgres] [--consumer g,h] [--topic a,b] [--max-lag n] [--stuck-after 5m] [--json]
                                               is this setup healthy? a line per finding; exit 0 healthy, 1 not`,
  console: `  console [--host h] [--port n] [--transport kafka|postgres] [--topic a,b] [--read-only]
                                               the operator's web console until SIGINT/SIGTERM (127.0.0.1:8089);
                                               prints an operator and a reader link (docs/console.md)`,
};

/** The operator commands' part (what `operatorCommand` runs in an application). */
export const operatorUsage = ['migrate', 'dlq', 'effects', 'outbox', 'doctor']
  .map((name) => commandUsage[name])
  .join('\n');

const environment = `environment: DATABASE_URL (the database; commands that change it refuse to run without it), KAFKA_BROKERS
  (default 127.0.0.1:9092), EFFECTIVELY_SCHEMA (the library's schema, default effectively; --schema s overrides it),
  EFFECTIVELY_CONSOLE_TOKEN / EFFECTIVELY_CONSOLE_READER_TOKEN / EFFECTIVELY_CONSOLE_HOST (console).
  Every command that opens the database first prints which one (host:port/name) and the schema, on stderr.
  Kafka over TLS and SASL: EFFECTIVELY_KAFKA_SSL=true, EFFECTIVELY_KAFKA_SSL_CA_FILE, EFFECTIVELY_KAFKA_SASL_MECHANISM,
  EFFECTIVELY_KAFKA_SASL_USERNAME, EFFECTIVELY_KAFKA_SASL_PASSWORD; PostgreSQL over TLS: sslmode=verify-full&sslrootcert=
  in DATABASE_URL. --config <file> (any command): the same settings as JSON (docs/configuration.md).`;

export const usage = `usage: effectively <command> [options]     effectively <command> --help     effectively --version
${Object.values(commandUsage).join('\n')}
${environment}`;
