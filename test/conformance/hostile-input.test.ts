// A hostile-input corpus on every transport: NUL bytes and invalid UTF-8 in every header the library reads or stores,
// in keys, in JSON strings bound for jsonb; huge values, 10,000 headers, empty names. Each record is either applied or
// a typed dead letter (exactly one of the two), nothing crashes, and a control record after them all is applied: the
// partition never sticks. Then the same with retry topics, where failure reasons come back in headers.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import type { ConsumerOptions } from '../../src/consumer/options.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgDb } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';
import { type DeadLetter, deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import type { OutgoingRecord, Transport } from '../../src/transport/port.ts';
import { eventually, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';
import { transportsUnderTest } from './transports.ts';

const NUL = '\u0000';
const badUtf8 = Buffer.from([0x61, 0xff, 0xfe, 0xc3, 0x28, 0x62]);

/** The corpus, in order on one partition; each entry built on a fresh valid event of `topic`. */
function corpus(topic: string, large: boolean): [string, OutgoingRecord][] {
  let n = 0;
  const fresh = (data: unknown = { n: n++ }) =>
    encodeEvent(createEvent({ topic, type: 'hostile.tried', source: '/hostile', key: `k${n % 5}`, data }));
  // As a producer in another stack would send them: bytes, not strings.
  const withHeader = (name: string, value: string | Buffer) => {
    const record = fresh();
    return { ...record, headers: { ...record.headers, [name]: Buffer.from(value) } };
  };
  const withValue = (value: Buffer | null) => ({ ...fresh(), value });
  const entries: [string, OutgoingRecord][] = [];
  for (const name of [
    'ce_id',
    'ce_source',
    'ce_type',
    'ce_specversion',
    'ce_version',
    'ce_time',
    'ce_partitionkey',
    'content-type',
    'effectively-attempt',
    'effectively-error-message',
    'effectively-original-partition',
    'effectively-group',
  ]) {
    entries.push([`NUL in ${name}`, withHeader(name, `a${NUL}b`)]);
    entries.push([`invalid UTF-8 in ${name}`, withHeader(name, badUtf8)]);
  }
  entries.push(['empty ce_id', withHeader('ce_id', '')]);
  entries.push(['100 KB ce_id', withHeader('ce_id', 'i'.repeat(100 * 1024))]);
  entries.push(['NUL in a header name', withHeader(`x-na${NUL}me`, 'v')]);
  entries.push(['empty header name', withHeader('', 'v')]);
  entries.push(['invalid UTF-8 in a custom header value', withHeader('x-custom', badUtf8)]);
  {
    const record = fresh();
    const headers: Record<string, string | Buffer> = { ...record.headers };
    for (let i = 0; i < 10_000; i++) headers[`x-h${i}`] = `v${i}`;
    entries.push(['10,000 headers', { ...record, headers }]);
  }
  entries.push(['NUL in the key', { ...fresh(), key: Buffer.from(`k${NUL}ey`) }]);
  entries.push(['NUL in a string key', { ...fresh(), key: `k${NUL}ey` }]);
  entries.push(['invalid UTF-8 key', { ...fresh(), key: badUtf8 }]);
  entries.push(['empty key', { ...fresh(), key: '' }]);
  entries.push(['NUL in a JSON string bound for jsonb', fresh({ n: n++, s: `a${NUL}b` })]);
  entries.push(['a lone surrogate escape bound for jsonb', withValue(Buffer.from('{"s":"\\ud800"}'))]);
  entries.push(['invalid UTF-8 value', withValue(badUtf8)]);
  entries.push(['empty value', withValue(Buffer.alloc(0))]);
  entries.push(['null value', withValue(null)]);
  entries.push(['JSON nested 5,000 deep', withValue(Buffer.from(`${'['.repeat(5000)}${']'.repeat(5000)}`))]);
  entries.push([
    'structured event with NUL in its id',
    {
      topic,
      key: 'k',
      value: Buffer.from(
        JSON.stringify({ specversion: '1.0', id: `x${NUL}y`, type: 't', source: '/s', data: { n: n++ } }),
      ),
      headers: { 'content-type': 'application/cloudevents+json' },
    },
  ]);
  entries.push([
    'structured event with invalid UTF-8',
    { topic, key: 'k', value: badUtf8, headers: { 'content-type': 'application/cloudevents+json; charset=utf-8' } },
  ]);
  if (large) entries.push(['10 MB value', fresh({ n: n++, blob: 'x'.repeat(10 * 1024 * 1024) })]);
  entries.push(['control', fresh()]);
  return entries;
}

/** md5 of the event id a record carries (header or structured value), as the handler keys applied rows. */
function idHash(record: OutgoingRecord): string | undefined {
  let id: string | undefined;
  const header = record.headers.ce_id;
  if (header !== undefined) id = typeof header === 'string' ? header : header.toString('utf8');
  else {
    try {
      id = (JSON.parse(String(record.value)) as { id?: string }).id;
    } catch {
      return undefined;
    }
  }
  return id === undefined ? undefined : createHash('md5').update(id, 'utf8').digest('hex');
}

/** Whether this runtime's JSON.stringify overflows the stack on the corpus's 5,000-deep array (as the handler does). */
const deepJsonOverflows = (() => {
  try {
    JSON.stringify(JSON.parse(`${'['.repeat(5000)}${']'.repeat(5000)}`));
    return false;
  } catch {
    return true;
  }
})();

/** The dead letter kept for the corpus entry `what` (it must be one). */
function letterOf(dead: Map<string, DeadLetter>, entries: [string, OutgoingRecord][], what: string): DeadLetter {
  const letter = dead.get(String(entries.findIndex(([name]) => name === what)));
  assert.ok(letter, `${what}: a dead letter`);
  return letter;
}

for (const under of transportsUnderTest) {
  describe(`hostile input: ${under.name}`, () => {
    let transport: Transport;
    let logDb: Db | undefined;
    let close = async () => undefined as void;
    let available = true;
    before(async () => {
      for (const service of under.needs) {
        if (!(await needs({ skip: () => undefined } as never, service))) available = false;
      }
      if (available) ({ transport, db: logDb, close } = await under.open());
    });
    after(() => close());

    async function run(t: { name: string }, options: Partial<ConsumerOptions>) {
      const own = logDb === undefined;
      const db: Db = logDb ?? pgDb({ max: 2 });
      const schema = randomName('hi');
      await migrate(db, { schema });
      const table = `${schema}.applied`;
      // Applied events by a hash of their id: on a retry topic a record's coordinates are the retry topic's.
      await db.query(`CREATE TABLE ${table} (id_hash text PRIMARY KEY, data jsonb)`);
      const topic = randomName('hi').replace('_', '-');
      const admin = transport.admin();
      await admin.createTopics([{ topic, partitions: 1 }]);
      const all = corpus(topic, under.name !== 'postgres (PGlite)');
      assert.ok(all.length >= 30, `a corpus of ${all.length}`);
      const producer = transport.producer();
      const entries: typeof all = [];
      for (const entry of all) {
        try {
          await producer.send([entry[1]]);
          entries.push(entry);
        } catch (error) {
          // Kafka cannot carry a NUL in a header name: the producer refuses it, with a code, instead of cutting it.
          assert.equal(entry[0], 'NUL in a header name');
          assert.equal((error as { code?: string }).code, 'EFF_INVALID_EVENT');
        }
      }
      await producer.close();
      const consumer = createConsumer({
        db,
        transport,
        group: randomName('g'),
        topics: [topic],
        schema,
        logger: silentLogger,
        maxAttempts: 2,
        retry: { baseMs: 10, capMs: 30 },
        handler: async (event, { tx }) => {
          await tx.query(`INSERT INTO ${table} (id_hash, data) VALUES (md5($1), $2::jsonb)`, [
            event.id,
            JSON.stringify(event.data ?? null),
          ]);
        },
        ...options,
      });
      const store = deadLetterStore({ schema });
      const control = idHash(entries.at(-1)![1]);
      try {
        await consumer.start();
        const applied = async () =>
          new Set((await db.query<{ id_hash: string }>(`SELECT id_hash FROM ${table}`)).rows.map((row) => row.id_hash));
        const dead = async () => new Map((await store.list(db, { limit: 10_000 })).map((l) => [l.offset, l]));
        // Settled: the control record applied, and every record applied or dead (retried ones come back later).
        await eventually(
          async () => (await applied()).has(control!) && (await applied()).size + (await dead()).size >= entries.length,
          120_000,
          `${t.name}: every record settled`,
        );
        const done = await applied();
        const letters = await dead();
        for (const [index, [what, record]] of entries.entries()) {
          const hash = idHash(record);
          const isApplied = hash !== undefined && done.has(hash);
          const letter = letters.get(String(index));
          assert.ok(isApplied !== (letter !== undefined), `${what}: applied or dead letter, exactly one`);
          if (letter) assert.match(letter.code, /^EFF_[A-Z_]+$/, `${what}: a typed dead letter`);
        }
        assert.equal(done.size + letters.size, entries.length, 'nothing applied or kept twice');
        return { dead: letters, entries };
      } finally {
        await consumer.close();
        await admin.deleteTopics([topic]).catch(() => undefined);
        await admin.close();
        if (own) await db.query(`DROP SCHEMA ${schema} CASCADE`);
        if (own) await db.close();
      }
    }

    test('every hostile record is applied or a typed dead letter; the control record after them is applied', async (t) => {
      if (!available) return t.skip(`${under.name} is not reachable`);
      const { dead, entries } = await run(t, {});
      // The bytes of a dead letter come back whole: a NUL and invalid UTF-8 in the id header (both are dead letters).
      assert.deepEqual(letterOf(dead, entries, 'NUL in ce_id').headers.ce_id, Buffer.from(`a${NUL}b`));
      assert.deepEqual(letterOf(dead, entries, 'invalid UTF-8 in ce_id').headers.ce_id, badUtf8);
    });

    test('the same corpus through retry topics: reasons that come back in headers are stored too', async (t) => {
      if (!available) return t.skip(`${under.name} is not reachable`);
      const { dead, entries } = await run(t, { retryTopics: { delaysMs: [50] } });
      // Records the handler failed on went through the retry topic (attempt 2) and died there: the reason stored is the
      // one the forwarding headers carried back, not a placeholder.
      const failing: [string, RegExp][] = [
        ['NUL in a JSON string bound for jsonb', /unsupported Unicode escape sequence/],
        ['a lone surrogate escape bound for jsonb', /invalid input syntax for type json/],
      ];
      // Serializing 5,000 levels overflows the stack on Node 20-24 but not on Node 26: a dead letter where it does,
      // applied (no letter) where it does not.
      const deep = 'JSON nested 5,000 deep';
      if (deepJsonOverflows) failing.push([deep, /^RangeError: Maximum call stack size exceeded/]);
      else assert.equal(dead.get(String(entries.findIndex(([name]) => name === deep))), undefined, deep);
      for (const [what, reason] of failing) {
        const letter = letterOf(dead, entries, what);
        assert.deepEqual([letter.code, letter.attempts], ['EFF_HANDLER_FAILED', 2], what);
        assert.match(letter.reason, reason, what);
      }
    });
  });
}
