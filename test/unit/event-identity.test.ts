// An event's identity is CloudEvents' source + id, the id any non-empty string. The dedup key derived from it: a UUID
// id is its own key (the key earlier versions wrote), any other id a UUIDv5 over source + id. Both content modes decode
// such ids unchanged, and the record-level readers (dead letters, key holds) agree with the decoded event.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  decodeEvent,
  encodeEventAs,
  eventIdOfRecord,
  eventKeyOfRecord,
  eventSourceOfRecord,
} from '../../src/envelope/cloudevents.ts';
import type { Event } from '../../src/envelope/event.ts';
import { dedupKey, dedupKeyOf, eventIdentityNamespace, isSelfKeyedUuid, uuidv5 } from '../../src/envelope/identity.ts';
import { isUuid, uuidv7 } from '../../src/envelope/uuidv7.ts';
import { EffectivelyError } from '../../src/errors.ts';
import type { IncomingRecord, OutgoingRecord } from '../../src/transport/port.ts';

function asIncoming(record: OutgoingRecord): IncomingRecord {
  const headers: Record<string, Buffer> = {};
  for (const [name, value] of Object.entries(record.headers)) headers[name] = Buffer.from(value);
  const key = record.key === null ? null : Buffer.from(record.key);
  return { topic: record.topic, partition: 0, offset: '3', key, value: record.value, headers, timestamp: 1 };
}

/** An event as another producer would send it: `createEvent` makes UUIDs only (the outbox needs one). */
const foreign = (id: string, source = '/billing'): Event => ({
  id,
  topic: 'invoices',
  type: 'invoice.issued',
  source,
  key: 'customer-7',
  time: '2026-12-03T04:00:00.000Z',
  data: { total: 12 },
  headers: {},
});

test('uuidv5 is RFC 9562 version 5 (its test vector)', () => {
  const dns = '6ba7b810-9dad-11d1-80b4-00c04fd430c8';
  assert.equal(uuidv5(dns, 'www.example.com'), '2ed6657d-e927-568b-95e1-2665a8aea6a2');
  assert.equal(
    eventIdentityNamespace,
    uuidv5('6ba7b811-9dad-11d1-80b4-00c04fd430c8', 'urn:effectively:event-identity:v1'),
  );
});

test('a v4 or v7 UUID id is its own dedup key, lowercased, whatever the source: the key earlier versions claimed', () => {
  for (const id of ['0193A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B', '0193a1b2-c3d4-4e5f-bA9B-0c1d2e3f4a5b', uuidv7()]) {
    assert.equal(dedupKey('/orders', id), id.toLowerCase());
    assert.equal(dedupKey('/elsewhere', id), id.toLowerCase(), 'the same UUID from two sources is one event');
  }
  assert.ok(isSelfKeyedUuid(crypto.randomUUID()));
});

// Issue 38, point 3: name-based UUIDs (v3, v5), the nil and max UUIDs, v1/v6/v8 and other variants are not unique on
// their own; two producers can send the same one for two events. They are keyed by source + id like any other id.
const notUniqueAlone = {
  'v5 (name-based)': uuidv5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'www.example.com'),
  'v3 (name-based)': '3d813cbb-47fb-32ba-91df-831e1593ac29',
  nil: '00000000-0000-0000-0000-000000000000',
  max: 'ffffffff-ffff-ffff-ffff-ffffffffffff',
  'v1 (clock and node)': '6ba7b810-9dad-11d1-80b4-00c04fd430c8',
  'v6 (clock and node)': '1ec9414c-232a-6b00-b3c8-9f6bdeced846',
  'v8 (custom)': '0193a1b2-c3d4-8e5f-8a9b-0c1d2e3f4a5b',
  'v4 digits, NCS variant': '0193a1b2-c3d4-4e5f-0a9b-0c1d2e3f4a5b',
  'v7 digits, Microsoft variant': '0193a1b2-c3d4-7e5f-ca9b-0c1d2e3f4a5b',
};

test('a UUID not unique on its own is keyed by source + id: the same one from two sources is two events', () => {
  for (const [what, id] of Object.entries(notUniqueAlone)) {
    assert.ok(isUuid(id) && !isSelfKeyedUuid(id), what);
    assert.notEqual(dedupKey('/billing', id), dedupKey('/shipping', id), what);
    assert.notEqual(dedupKey('/billing', id), id, what);
    assert.equal(dedupKey('/billing', id.toUpperCase()), dedupKey('/billing', id), `${what}: UUIDs ignore case`);
    for (const mode of ['binary', 'structured'] as const) {
      const record = asIncoming(encodeEventAs(foreign(id.toUpperCase(), '/shipping'), mode));
      assert.equal(eventKeyOfRecord(record), dedupKeyOf(decodeEvent(record)), `${what}, ${mode}`);
      assert.equal(eventKeyOfRecord(record), dedupKey('/shipping', id), `${what}, ${mode}`);
    }
  }
  // Naive twin: the rule before, every UUID its own key, takes the two events for one.
  const before = (source: string, id: string) => (isUuid(id) ? id.toLowerCase() : dedupKey(source, id));
  for (const [what, id] of Object.entries(notUniqueAlone)) {
    assert.equal(before('/billing', id), before('/shipping', id), what);
  }
});

test('a string id is keyed by source + id: the same id from two sources is two events, from one source one', () => {
  const billing = dedupKey('/billing', '42');
  const shipping = dedupKey('/shipping', '42');
  assert.ok(isUuid(billing) && isUuid(shipping));
  assert.notEqual(billing, shipping);
  assert.equal(dedupKey('/billing', '42'), billing, 'deterministic: a redelivered copy finds its claim');
  assert.notEqual(dedupKey('/billing', 'Order-1'), dedupKey('/billing', 'order-1'), 'string ids keep their case');
});

test('the name is unambiguous: no two (source, id) pairs share one, whatever the strings hold', () => {
  assert.notEqual(dedupKey('/a', 'b1'), dedupKey('/ab', '1'));
  assert.notEqual(dedupKey('a\nb', 'c'), dedupKey('a', 'b\nc'));
  // Naive twin: a plain concatenation (or a separator the strings may hold) joins both pairs into one name.
  const concatenated = (source: string, id: string) => uuidv5(eventIdentityNamespace, `${source}${id}`);
  assert.equal(concatenated('/a', 'b1'), concatenated('/ab', '1'));
  const separated = (source: string, id: string) => uuidv5(eventIdentityNamespace, `${source}\n${id}`);
  assert.equal(separated('a\nb', 'c'), separated('a', 'b\nc'));
});

test('the derivation is pinned: changing it would make every applied event with a string id apply again', () => {
  assert.equal(dedupKey('/shop/orders', 'order-2026-000123'), 'f1c3a4d2-59ca-567d-993f-31dba449127d');
  assert.equal(dedupKey('/billing', '42'), '55b7a9d0-752d-553e-bc70-744f798b37c1');
  assert.equal(dedupKey('/shipping', '42'), 'b4f73165-802c-58fa-b51c-4facc5356651');
  const name = Buffer.concat([Buffer.from('12:/shop/orders'), Buffer.from('order-2026-000123')]);
  assert.equal(uuidv5(eventIdentityNamespace, name), dedupKey('/shop/orders', 'order-2026-000123'));
});

test('any non-empty id decodes in both modes, unchanged; record readers agree with the decoded event', () => {
  const ids = ['order-2026-000123', 'evt_01HXYZ', '42', 'Ünïcödé ✓ 🎟', ' spaced ', 'urn:uuid:not-checked', 'x'];
  for (const mode of ['binary', 'structured'] as const) {
    for (const id of ids) {
      const record = asIncoming(encodeEventAs(foreign(id), mode));
      const event = decodeEvent(record);
      assert.equal(event.id, id, `${mode} ${id}`);
      assert.equal(event.source, '/billing');
      assert.equal(eventIdOfRecord(record), id);
      assert.equal(eventSourceOfRecord(record), '/billing');
      assert.equal(eventKeyOfRecord(record), dedupKeyOf(event));
      assert.equal(eventKeyOfRecord(record), dedupKey('/billing', id));
    }
    const upper = asIncoming(encodeEventAs(foreign('0193A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B'), mode));
    assert.equal(decodeEvent(upper).id, '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', 'a UUID in its canonical form');
    assert.equal(eventKeyOfRecord(upper), '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b');
  }
});

test('ids and sources that are not text fail with stable codes, and have no key', () => {
  const binary = asIncoming(encodeEventAs(foreign('42'), 'binary'));
  const structured = asIncoming(encodeEventAs(foreign('42'), 'structured'));
  const withDocument = (change: Record<string, unknown>) => ({
    ...structured,
    value: Buffer.from(JSON.stringify({ ...JSON.parse(structured.value!.toString()), ...change })),
  });
  const cases: [string, IncomingRecord, string][] = [
    ['binary: empty id', { ...binary, headers: { ...binary.headers, ce_id: Buffer.alloc(0) } }, 'EFF_MISSING_EVENT_ID'],
    [
      'binary: id not UTF-8',
      { ...binary, headers: { ...binary.headers, ce_id: Buffer.from([0xff]) } },
      'EFF_INVALID_EVENT',
    ],
    [
      'binary: source not UTF-8',
      { ...binary, headers: { ...binary.headers, ce_source: Buffer.from([0x2f, 0xfe]) } },
      'EFF_INVALID_EVENT',
    ],
    ['structured: empty id', withDocument({ id: '' }), 'EFF_MISSING_EVENT_ID'],
    ['structured: id a number', withDocument({ id: 42 }), 'EFF_MISSING_EVENT_ID'],
    ['structured: id a lone surrogate', withDocument({ id: 'a\ud800' }), 'EFF_INVALID_EVENT'],
    ['structured: source a lone surrogate', withDocument({ source: '/\udc00' }), 'EFF_INVALID_EVENT'],
  ];
  for (const [name, record, code] of cases) {
    assert.throws(
      () => decodeEvent(record),
      (error: unknown) => error instanceof EffectivelyError && error.code === code && !error.retryable,
      name,
    );
    assert.equal(eventKeyOfRecord(record), null, name);
  }
  // Two ids whose bytes differ only where they are not UTF-8 would share one key if read leniently (U+FFFD).
  const lenient = (bytes: number[]) => Buffer.from(bytes).toString('utf8');
  assert.equal(lenient([0x61, 0xff]), lenient([0x61, 0xfe]));
});
