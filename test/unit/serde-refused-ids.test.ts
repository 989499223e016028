// Issue 11 item 5: a schema id the registry refused (unknown, or a 401/403/404 from a proxy or a lagging replica) is
// remembered for a while, not for the life of the process, and the memory of ids is bounded (hostile records with
// random ids must not grow it); the HTTP client refuses an id that is not a number (an HTML 200 from a gateway
// became NaN, cached and written as id 0 into every record).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import { EffectivelyError } from '../../src/errors.ts';
import { unknownSchemaId } from '../../src/schema/registry/errors.ts';
import { httpSchemaRegistry } from '../../src/schema/registry/http.ts';
import type { SchemaRegistry } from '../../src/schema/registry/port.ts';
import { postgresSchemaRegistry } from '../../src/schema/registry/postgres.ts';
import { avroSerde } from '../../src/schema/serde/avro.ts';
import { encodeWire } from '../../src/schema/serde/wire.ts';

const schema = { type: 'record', name: 'Ping', fields: [{ name: 'n', type: 'int' }] };
let db: Awaited<ReturnType<typeof pgliteDb>>;
let registry: SchemaRegistry;
before(async () => {
  db = await pgliteDb();
  await migrate(db);
  registry = postgresSchemaRegistry({ db, cache: false });
});
after(() => db.close());

/** The real registry, except that it does not know `id` yet while `lagging` (a replica behind) and counts asks. */
function lagging(inner: SchemaRegistry) {
  const state = { lagging: true, asked: new Map<number, number>() };
  const wrapped: SchemaRegistry = {
    ...inner,
    getById: async (id) => {
      state.asked.set(id, (state.asked.get(id) ?? 0) + 1);
      if (state.lagging) throw unknownSchemaId(id);
      return inner.getById(id);
    },
  };
  return { registry: wrapped, state };
}

async function code(promise: Promise<unknown>): Promise<string | undefined> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  return error instanceof EffectivelyError ? error.code : String(error);
}

test('serde refused ids: an id the registry did not know yet is asked again once the refusal expired', async () => {
  let time = 0;
  const writer = avroSerde({ registry, schema });
  const bytes = await writer.serialize('pings', { n: 7 });
  const { registry: behind, state } = lagging(registry);
  const reader = avroSerde<Record<string, unknown>>({
    registry: behind,
    schema,
    refusedIdTtlMs: 60_000,
    now: () => time,
  });
  assert.equal(await code(reader.deserialize('pings', bytes)), 'EFF_SCHEMA_UNKNOWN_ID');
  state.lagging = false;
  assert.equal(await code(reader.deserialize('pings', bytes)), 'EFF_SCHEMA_UNKNOWN_ID', 'remembered for a while');
  time += 60_000;
  assert.deepEqual({ ...(await reader.deserialize('pings', bytes)) }, { n: 7 });
});

test('serde refused ids: the memory of ids is bounded (random hostile ids do not grow it)', async () => {
  const { registry: counting, state } = lagging(registry);
  const reader = avroSerde({ registry: counting, schema, maxCachedIds: 100 });
  for (let id = 1_000_000; id < 1_000_300; id++) {
    assert.equal(await code(reader.deserialize('pings', encodeWire(id, Buffer.from([2])))), 'EFF_SCHEMA_UNKNOWN_ID');
  }
  // naive twin: a recent refusal is still remembered (no new ask) ...
  await reader.deserialize('pings', encodeWire(1_000_299, Buffer.from([2]))).catch(() => undefined);
  assert.equal(state.asked.get(1_000_299), 1);
  // ... while the oldest was forgotten to stay within 100 entries, so it is asked again
  await reader.deserialize('pings', encodeWire(1_000_000, Buffer.from([2]))).catch(() => undefined);
  assert.equal(state.asked.get(1_000_000), 2);
});

test('serde refused ids: options are validated', () => {
  assert.throws(() => avroSerde({ registry, schema, maxCachedIds: 0 }), { code: 'EFF_INVALID_OPTIONS' });
  assert.throws(() => avroSerde({ registry, schema, refusedIdTtlMs: -1 }), { code: 'EFF_INVALID_OPTIONS' });
});

test('http registry: an id that is not a number (a gateway answering 200 with HTML) is refused, never NaN', async (t) => {
  const gateway = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end('<html><body>Please sign in</body></html>');
  });
  await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => gateway.close(() => resolve())));
  const url = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
  const client = httpSchemaRegistry({ url, cache: false });
  assert.equal(await code(client.register('pings-value', schema, 'avro')), 'EFF_SCHEMA_REGISTRY_UNAVAILABLE');
  assert.equal(await code(client.getLatest('pings-value')), 'EFF_SCHEMA_REGISTRY_UNAVAILABLE');
  const serde = avroSerde({ registry: httpSchemaRegistry({ url }), schema });
  assert.equal(await code(serde.serialize('pings', { n: 1 })), 'EFF_SCHEMA_REGISTRY_UNAVAILABLE');
});

test('wire: an id that is not a 32-bit integer is refused, not written as 0', () => {
  assert.throws(() => encodeWire(Number.NaN, Buffer.alloc(0)), { code: 'EFF_SCHEMA_ENCODE_FAILED' });
  assert.throws(() => encodeWire(2 ** 32, Buffer.alloc(0)), { code: 'EFF_SCHEMA_ENCODE_FAILED' });
  assert.equal(encodeWire(7, Buffer.alloc(0)).readInt32BE(1), 7);
});
