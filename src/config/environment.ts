/**
 * One configuration for the connections, in the shape of the API's own options (`pgDb`, `kafkaTransport`):
 * - a file (`effectively --config <file>`, or `loadConfigFile`): JSON `{ database: { url }, kafka: { brokers, ssl,
 *   sasl }, schema }`, whose `ssl.ca` / `certificate` / `key` may be given as files (`caFile`, `certificateFile`,
 *   `keyFile`);
 * - environment variables, which the library reads as defaults wherever an option is not given (so the CLI, the
 *   operator commands and an application read the same ones): `DATABASE_URL`, `KAFKA_BROKERS`, `EFFECTIVELY_SCHEMA`,
 *   and `EFFECTIVELY_KAFKA_SSL` (`true`), `EFFECTIVELY_KAFKA_SSL_CA_FILE`, `EFFECTIVELY_KAFKA_SASL_MECHANISM`,
 *   `EFFECTIVELY_KAFKA_SASL_USERNAME`, `EFFECTIVELY_KAFKA_SASL_PASSWORD`.
 * Everything is validated when read: `EFF_INVALID_OPTIONS` naming the field or the variable, never quoting a value.
 */
import { readFileSync } from 'node:fs';
import { invalidOptions } from '../errors.ts';
import type { KafkaSasl, KafkaSsl } from '../transport/kafka/security.ts';

const mechanisms = ['plain', 'scram-sha-256', 'scram-sha-512'] as const;

function readPem(path: string, field: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw invalidOptions(field, `cannot read the file (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
}

/** The Kafka security the environment asks for (`{}` when it asks for none). */
export function kafkaSecurityFromEnvironment(env: NodeJS.ProcessEnv = process.env): {
  ssl?: KafkaSsl;
  sasl?: KafkaSasl;
} {
  const result: { ssl?: KafkaSsl; sasl?: KafkaSasl } = {};
  const ssl = env.EFFECTIVELY_KAFKA_SSL;
  const caFile = env.EFFECTIVELY_KAFKA_SSL_CA_FILE;
  if (ssl !== undefined && ssl !== 'true' && ssl !== 'false') {
    throw invalidOptions('EFFECTIVELY_KAFKA_SSL', 'must be true or false');
  }
  if (caFile) result.ssl = { ca: readPem(caFile, 'EFFECTIVELY_KAFKA_SSL_CA_FILE') };
  else if (ssl === 'true') result.ssl = true;
  if (ssl === 'false' && caFile) throw invalidOptions('EFFECTIVELY_KAFKA_SSL', 'is false while a CA file is given');
  const mechanism = env.EFFECTIVELY_KAFKA_SASL_MECHANISM?.toLowerCase();
  if (mechanism === undefined || mechanism === '') return result;
  if (!(mechanisms as readonly string[]).includes(mechanism)) {
    throw invalidOptions('EFFECTIVELY_KAFKA_SASL_MECHANISM', `must be one of ${mechanisms.join(', ')}`);
  }
  const username = env.EFFECTIVELY_KAFKA_SASL_USERNAME;
  const password = env.EFFECTIVELY_KAFKA_SASL_PASSWORD;
  if (!username) throw invalidOptions('EFFECTIVELY_KAFKA_SASL_USERNAME', 'must be set with a SASL mechanism');
  if (!password) throw invalidOptions('EFFECTIVELY_KAFKA_SASL_PASSWORD', 'must be set with a SASL mechanism');
  result.sasl = { mechanism: mechanism as (typeof mechanisms)[number], username, password };
  return result;
}

type Json = Record<string, unknown>;

function objectAt(value: unknown, field: string): Json | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidOptions(field, 'an object');
  return value as Json;
}

function onlyKeys(value: Json, field: string, allowed: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      throw invalidOptions(`${field}.${key}`, `unknown; expected one of ${allowed.join(', ')}`);
    }
  }
}

function stringAt(value: Json, key: string, field: string): string | undefined {
  const found = value[key];
  if (found === undefined) return undefined;
  if (typeof found !== 'string' || found === '') throw invalidOptions(`${field}.${key}`, 'a non-empty string');
  return found;
}

/**
 * Where the file stops being JSON, never what it says there: the parser's message quotes the text around the mistake,
 * which in a configuration file is as likely as not a password (a value left unquoted, or in single quotes).
 */
function notJson(error: SyntaxError): string {
  const where = /at position \d+( \(line \d+ column \d+\))?/.exec(error.message)?.[0];
  return `is not JSON (a syntax error${where ? ` ${where}` : ''}; the text is not quoted here, it may hold a secret)`;
}

/** The environment a configuration file stands for: the variables above, one per field. */
export type ConfigEnvironment = Record<string, string>;

/**
 * Reads and validates a configuration file; returns it as the environment variables above (the CLI sets those not
 * already set: a variable of the environment wins over the file). PEM files are read here.
 */
export function loadConfigFile(path: string): ConfigEnvironment {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw invalidOptions(
      'config',
      `the file ${path} ${error instanceof SyntaxError ? notJson(error) : 'cannot be read'}`,
    );
  }
  const root = objectAt(parsed, 'config') ?? {};
  onlyKeys(root, 'config', ['database', 'kafka', 'schema']);
  const out: ConfigEnvironment = {};
  const schema = stringAt(root, 'schema', 'config');
  if (schema !== undefined) out.EFFECTIVELY_SCHEMA = schema;
  const database = objectAt(root.database, 'config.database');
  if (database) {
    onlyKeys(database, 'config.database', ['url']);
    const url = stringAt(database, 'url', 'config.database');
    if (url !== undefined) out.DATABASE_URL = url;
  }
  const kafka = objectAt(root.kafka, 'config.kafka');
  if (!kafka) return out;
  onlyKeys(kafka, 'config.kafka', ['brokers', 'ssl', 'sasl']);
  if (kafka.brokers !== undefined) {
    const brokers = kafka.brokers;
    if (!Array.isArray(brokers) || brokers.length === 0 || brokers.some((b) => typeof b !== 'string' || b === '')) {
      throw invalidOptions('config.kafka.brokers', 'a non-empty array of host:port strings');
    }
    out.KAFKA_BROKERS = brokers.join(',');
  }
  if (kafka.ssl === true || kafka.ssl === false) out.EFFECTIVELY_KAFKA_SSL = String(kafka.ssl);
  else if (kafka.ssl !== undefined) {
    const ssl = objectAt(kafka.ssl, 'config.kafka.ssl')!;
    onlyKeys(ssl, 'config.kafka.ssl', ['caFile']);
    const caFile = stringAt(ssl, 'caFile', 'config.kafka.ssl');
    if (caFile !== undefined) {
      readPem(caFile, 'config.kafka.ssl.caFile');
      out.EFFECTIVELY_KAFKA_SSL_CA_FILE = caFile;
    }
    out.EFFECTIVELY_KAFKA_SSL = 'true';
  }
  const sasl = objectAt(kafka.sasl, 'config.kafka.sasl');
  if (sasl) {
    onlyKeys(sasl, 'config.kafka.sasl', ['mechanism', 'username', 'password']);
    const mechanism = stringAt(sasl, 'mechanism', 'config.kafka.sasl');
    if (mechanism === undefined || !(mechanisms as readonly string[]).includes(mechanism)) {
      throw invalidOptions('config.kafka.sasl.mechanism', `one of ${mechanisms.join(', ')}`);
    }
    const username = stringAt(sasl, 'username', 'config.kafka.sasl');
    const password = stringAt(sasl, 'password', 'config.kafka.sasl');
    if (username === undefined) throw invalidOptions('config.kafka.sasl.username', 'required with a mechanism');
    if (password === undefined) throw invalidOptions('config.kafka.sasl.password', 'required with a mechanism');
    Object.assign(out, {
      EFFECTIVELY_KAFKA_SASL_MECHANISM: mechanism,
      EFFECTIVELY_KAFKA_SASL_USERNAME: username,
      EFFECTIVELY_KAFKA_SASL_PASSWORD: password,
    });
  }
  return out;
}
