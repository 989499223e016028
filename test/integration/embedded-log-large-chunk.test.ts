// The embedded log takes a chunk of 300 records of 1 MB of one key, in order (issue 37, hole 2). node-postgres spells a
// bytea[] parameter as one hex string, twice the bytes; past about 256 MB that string is longer than V8 allows
// (`RangeError: Invalid string length`, no code) and the chunk could never be published. The append now passes binary
// arrays in statements of about 16 MB. Real PostgreSQL. (The relay's own chunks have a byte budget, `batchBytes`; a
// user who raises it, a pipeline or a redrive can still hand the log such a send.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadSql } from '../../src/db/sql.ts';
import { decodeHeaders, encodeHeaders } from '../../src/transport/postgres/codec.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const rows = 300;
const pad = 'x'.repeat(1024 * 1024);

test('300 records of 1 MB of one key in one send: all on the embedded log, in order', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const transport = postgresTransport({ db, schema });
  await transport.admin().createTopics([{ topic: 'big', partitions: 2 }]);
  const producer = transport.producer();
  t.after(() => producer.close());
  const value = Buffer.from(pad);
  // What a relay chunk of 300 such rows becomes: one send, in the order of the outbox.
  await producer.send(
    Array.from({ length: rows }, (_, n) => ({ topic: 'big', key: 'one-key', value, headers: { n: String(n) } })),
  );
  const { rows: log } = await db.query<{ offset: string; headers: Record<string, string>; size: number }>(
    `SELECT "offset", headers, octet_length(value) AS size FROM ${schema}.log_records WHERE topic = 'big'
      ORDER BY partition, "offset"`,
  );
  assert.equal(log.length, rows);
  const sequence = Array.from({ length: rows }, (_, n) => n);
  assert.deepEqual(
    log.map((record) => Number(decodeHeaders(record.headers).n?.toString())),
    sequence,
  );
  assert.deepEqual(
    log.map((record) => Number(record.offset)),
    sequence,
  );
  assert.ok(log.every((record) => record.size === value.length));
});

test('naive twin: the same 300 records as one text bytea[] parameter (the old append) never reach the log', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const value = Buffer.from(pad);
  const append = loadSql(
    new URL('../../src/transport/postgres/producer.ts', import.meta.url).href,
    'sql/append.sql',
    schema,
  );
  await assert.rejects(
    db.query(append, [
      'big',
      0,
      '0',
      Array.from({ length: rows }, () => 'one-key'),
      Array.from({ length: rows }, () => encodeHeaders({})),
      Array.from({ length: rows }, () => value),
      Array.from({ length: rows }, () => null),
    ]),
    (error: unknown) => error instanceof RangeError && /Invalid string length/.test(error.message),
  );
});
