// Issue 33 item 3: one configuration. A file (`--config`) and EFFECTIVELY_* variables in the shape of the API's
// options, validated when read: each mistake is EFF_INVALID_OPTIONS naming the field or the variable, never its value.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { kafkaSecurityFromEnvironment, loadConfigFile } from '../../src/config/environment.ts';
import { EffectivelyError } from '../../src/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'effectively-config-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));
const ca = join(dir, 'ca.pem');
writeFileSync(ca, '-----BEGIN CERTIFICATE-----\n');
const file = (content: unknown) => {
  const path = join(dir, `c-${Math.random()}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
};
const refused = (field: string) => (error: unknown) => {
  assert.ok(error instanceof EffectivelyError);
  assert.equal(error.code, 'EFF_INVALID_OPTIONS');
  assert.equal(error.details.field, field);
  assert.doesNotMatch(error.message, /s3cret/, 'no value quoted');
  return true;
};

test('a file becomes the environment variables it stands for', () => {
  const sasl = { mechanism: 'scram-sha-512', username: 'orders', password: 's3cret' };
  const config = { database: { url: 'postgres://db/x' }, kafka: { brokers: ['k:9093'], ssl: { caFile: ca }, sasl } };
  assert.deepEqual(loadConfigFile(file({ ...config, schema: 'shop' })), {
    EFFECTIVELY_SCHEMA: 'shop',
    DATABASE_URL: 'postgres://db/x',
    KAFKA_BROKERS: 'k:9093',
    EFFECTIVELY_KAFKA_SSL_CA_FILE: ca,
    EFFECTIVELY_KAFKA_SSL: 'true',
    EFFECTIVELY_KAFKA_SASL_MECHANISM: 'scram-sha-512',
    EFFECTIVELY_KAFKA_SASL_USERNAME: 'orders',
    EFFECTIVELY_KAFKA_SASL_PASSWORD: 's3cret',
  });
  assert.deepEqual(loadConfigFile(file({ kafka: { ssl: true } })), { EFFECTIVELY_KAFKA_SSL: 'true' });
});

test('a file that is not JSON is refused without quoting its text (the JSON parser quotes it: a password)', () => {
  for (const text of [
    `{"kafka":{"sasl":{"mechanism":"plain","username":"u","password":'s3cret-of-orders'}}}`,
    '{"kafka":{"sasl":{"mechanism":"plain","username":"u","password":s3cret-of-orders}}}',
    '{"database":{"url":postgres://orders:s3cret-of-orders@db/x}}',
    '{"database":{"url":"postgres://orders:s3cret-of-orders@db/x"},}',
  ]) {
    assert.throws(
      () => loadConfigFile(file(text)),
      (error: unknown) => refused('config')(error) && !/s3c/.test((error as Error).message),
      text,
    );
  }
});

test("naive twin: the JSON parser's own message quotes the password", () => {
  assert.throws(() => JSON.parse('{"kafka":{"sasl":{"password":s3cret-of-orders}}}'), /s3c/);
});

test('each mistake in a file names its field', () => {
  const sasl = { mechanism: 'scram-sha-256', username: 'u', password: 's3cret' };
  assert.throws(() => loadConfigFile(file('{ nope')), refused('config'));
  assert.throws(() => loadConfigFile(join(dir, 'missing.json')), refused('config'));
  assert.throws(() => loadConfigFile(file({ kafka: { broker: ['x'] } })), refused('config.kafka.broker'));
  assert.throws(() => loadConfigFile(file({ kafka: { brokers: [] } })), refused('config.kafka.brokers'));
  assert.throws(
    () => loadConfigFile(file({ kafka: { sasl: { ...sasl, mechanism: 'md5' } } })),
    refused('config.kafka.sasl.mechanism'),
  );
  assert.throws(
    () => loadConfigFile(file({ kafka: { sasl: { ...sasl, password: '' } } })),
    refused('config.kafka.sasl.password'),
  );
  assert.throws(
    () => loadConfigFile(file({ kafka: { ssl: { caFile: join(dir, 'none.pem') } } })),
    refused('config.kafka.ssl.caFile'),
  );
  assert.throws(() => loadConfigFile(file({ database: { url: 5 } })), refused('config.database.url'));
  assert.throws(() => loadConfigFile(file([1])), refused('config'));
});

test('EFFECTIVELY_KAFKA_* variables: TLS and SASL for every Kafka client, each mistake named', () => {
  assert.deepEqual(kafkaSecurityFromEnvironment({}), {});
  assert.deepEqual(kafkaSecurityFromEnvironment({ EFFECTIVELY_KAFKA_SSL: 'true' }), { ssl: true });
  const env = {
    EFFECTIVELY_KAFKA_SSL_CA_FILE: ca,
    EFFECTIVELY_KAFKA_SASL_MECHANISM: 'SCRAM-SHA-256',
    EFFECTIVELY_KAFKA_SASL_USERNAME: 'u',
    EFFECTIVELY_KAFKA_SASL_PASSWORD: 's3cret',
  };
  assert.deepEqual(kafkaSecurityFromEnvironment(env), {
    ssl: { ca: '-----BEGIN CERTIFICATE-----\n' },
    sasl: { mechanism: 'scram-sha-256', username: 'u', password: 's3cret' },
  });
  const without = (name: string) => ({ ...env, [name]: '' });
  assert.throws(() => kafkaSecurityFromEnvironment({ EFFECTIVELY_KAFKA_SSL: 'yes' }), refused('EFFECTIVELY_KAFKA_SSL'));
  assert.throws(
    () => kafkaSecurityFromEnvironment(without('EFFECTIVELY_KAFKA_SASL_PASSWORD')),
    refused('EFFECTIVELY_KAFKA_SASL_PASSWORD'),
  );
  assert.throws(
    () => kafkaSecurityFromEnvironment({ ...env, EFFECTIVELY_KAFKA_SASL_MECHANISM: 'gssapi' }),
    refused('EFFECTIVELY_KAFKA_SASL_MECHANISM'),
  );
  assert.throws(
    () => kafkaSecurityFromEnvironment({ ...env, EFFECTIVELY_KAFKA_SSL_CA_FILE: join(dir, 'none.pem') }),
    refused('EFFECTIVELY_KAFKA_SSL_CA_FILE'),
  );
});
