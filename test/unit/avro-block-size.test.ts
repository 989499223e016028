// An Avro block of a negative count carries its size in bytes, which avsc uses to jump over the block where the
// reader's schema drops the field (its resolver's skip), and ignores where it reads the items. A size that is not what
// the items take is refused: with one, the bounds walk checked the items while avsc jumped elsewhere and read bytes the
// walk never saw (a count of 3,000,000 hidden in a string), or, negative, jumped back and read the same block for ever.
// Naive twin: avsc alone, skipping the field, reads that hidden count.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import avsc from 'avsc';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import { EffectivelyError } from '../../src/errors.ts';
import { postgresSchemaRegistry } from '../../src/schema/registry/postgres.ts';
import { avroSerde } from '../../src/schema/serde/avro.ts';
import { AvroBoundsError, checkAvroBounds } from '../../src/schema/serde/avro-bounds.ts';
import { avroVarint } from '../support/avro.ts';

const typeOf = (schema: unknown) => avsc.Type.forSchema(schema as avsc.Schema);
const victim = { name: 'victim', type: { type: 'array', items: 'null' } };
const writerSchema = {
  type: 'record',
  name: 'Seats',
  fields: [{ name: 'skipped', type: { type: 'array', items: 'string' } }, victim],
};
const readerSchema = { type: 'record', name: 'Seats', fields: [victim] };
const writer = typeOf(writerSchema);
const reader = typeOf(readerSchema);

/** `skipped`: one block of count -1 and size 1 (over the string's length byte only), whose string holds the end of
 * the array and then the count avsc reads for `victim`; the walk reads the string and `victim`'s own count, 0. */
const hidden = [0, ...avroVarint(-3_000_000)];
const jumping = Buffer.from([...avroVarint(-1), ...avroVarint(1), ...avroVarint(hidden.length), ...hidden, 0, 0]);
/** `skipped`: a block of size -2, back onto its own count. */
const looping = Buffer.from([...avroVarint(-1), ...avroVarint(-2), ...avroVarint(0), 0, 0]);

test('a block whose size is not what its items take is refused', () => {
  for (const payload of [jumping, looping]) {
    assert.throws(() => checkAvroBounds(writer as never, payload), AvroBoundsError, payload.toString('hex'));
  }
});

test('naive twin: avsc alone, skipping the dropped field by its size, reads the count hidden in the string', () => {
  const value = reader.fromBuffer(jumping, reader.createResolver(writer)) as { victim: unknown[] };
  assert.equal(value.victim.length, 3_000_000);
});

test('good blocks of a negative count and their true size pass, and decode both ways', () => {
  const items = [...avroVarint(2), 97, 98, ...avroVarint(1), 99]; // "ab", "c"
  const payload = Buffer.from([...avroVarint(-2), ...avroVarint(items.length), ...items, 0, ...avroVarint(-1), 0, 0]);
  assert.equal(checkAvroBounds(writer as never, payload), payload.length);
  assert.deepEqual({ ...(writer.fromBuffer(payload) as object) }, { skipped: ['ab', 'c'], victim: [null] });
  assert.deepEqual({ ...(reader.fromBuffer(payload, reader.createResolver(writer)) as object) }, { victim: [null] });
});

let db: Awaited<ReturnType<typeof pgliteDb>>;
before(async () => {
  db = await pgliteDb();
  await migrate(db);
});
after(() => db.close());

test('the Avro serde of a reader that drops the field refuses both payloads with EFF_SCHEMA_DECODE_FAILED', async () => {
  const registry = postgresSchemaRegistry({ db });
  const good = await avroSerde<object>({ registry, schema: writerSchema }).serialize('seats', {
    skipped: ['a'],
    victim: [null],
  });
  const serde = avroSerde<object>({ registry, schema: readerSchema });
  assert.deepEqual({ ...(await serde.deserialize('seats', good)) }, { victim: [null] });
  for (const payload of [jumping, looping]) {
    const started = performance.now();
    const error = await serde.deserialize('seats', Buffer.concat([good.subarray(0, 5), payload])).then(
      () => assert.fail('decoded'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof EffectivelyError, String(error));
    assert.equal(error.code, 'EFF_SCHEMA_DECODE_FAILED');
    assert.ok(performance.now() - started < 2000, 'refused at once');
  }
});
