// What an event may hold is decided once, at the API, by the strictest transport's rules: a topic name Kafka refuses
// is refused on the embedded transport too, and text the outbox cannot store (NUL, lone surrogates) is refused with a
// coded error before any statement runs, instead of a raw 22021/22P05 from the caller's transaction.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Queryable } from '../../src/db/port.ts';
import { assertValidEvent, createEvent, type Event } from '../../src/envelope/event.ts';
import { topicNameProblem } from '../../src/envelope/topic-name.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';

const base = { topic: 'orders', type: 'order.confirmed', source: '/orders', key: 'o-1', data: { n: 1 } };
const refused = (change: Record<string, unknown>, field: string) =>
  assert.throws(
    () => createEvent({ ...base, ...change } as never),
    (error: { code?: string; details?: { field?: string } }) =>
      error.code === 'EFF_INVALID_EVENT' && (error.details?.field ?? '').startsWith(field),
    JSON.stringify(change).slice(0, 80),
  );

test("topic names: Kafka's rule on every transport", () => {
  for (const good of ['orders', 'a.b_c-1', 'Orders.V2', 'x'.repeat(249), '...', '-']) {
    assert.equal(topicNameProblem(good), undefined, good);
    assert.equal(createEvent({ ...base, topic: good }).topic, good);
  }
  for (const bad of ['', ' ', 'has space', 'ação', 'x'.repeat(250), '.', '..', 'a/b', 'a\u0000b', 'tab\t', 'a:b']) {
    assert.notEqual(topicNameProblem(bad), undefined, JSON.stringify(bad));
    refused({ topic: bad }, 'topic');
  }
});

test('type, source, key and headers must be storable text; the version an integer; the id a UUID', () => {
  for (const field of ['type', 'source', 'key']) {
    refused({ [field]: 'a\u0000b' }, field);
    refused({ [field]: 'lone \ud800 surrogate' }, field);
    refused({ [field]: '' }, field);
  }
  refused({ headers: { 'x-trace': 'a\u0000b' } }, 'headers');
  refused({ headers: { 'bad\u0000name': 'v' } }, 'headers');
  refused({ version: 1.5 }, 'version');
  refused({ id: 'order-1' }, 'id');
  // what passes: any other Unicode, an empty header value, a pair of surrogates (an emoji)
  const event = createEvent({ ...base, key: 'chave-ção-😀', headers: { 'x-empty': '' } });
  assert.equal(event.key, 'chave-ção-😀');
});

test('enqueue checks hand-built events with the same rules before any statement', async () => {
  const statements: string[] = [];
  const tx: Queryable = {
    query: async (text: string) => {
      statements.push(text);
      return { rows: [], rowCount: 0 };
    },
  };
  const good = createEvent(base);
  const handBuilt = { ...good, topic: 'has space' } as Event;
  await assert.rejects(createOutbox().enqueue(tx, [good, handBuilt]), { code: 'EFF_INVALID_EVENT' });
  await assert.rejects(createOutbox().enqueue(tx, { ...good, key: 'k\u0000' }), { code: 'EFF_INVALID_EVENT' });
  assert.deepEqual(statements, [], 'nothing reached the database');
  assert.doesNotThrow(() => assertValidEvent(good));
});

test('a consumer refuses topics Kafka refuses, and main topics whose retry chain would be too long', async () => {
  const { createConsumer } = await import('../../src/consumer/consumer.ts');
  const { pgliteDb } = await import('../../src/db/pglite.ts');
  const { postgresTransport } = await import('../../src/transport/postgres/transport.ts');
  const db = await pgliteDb();
  try {
    const make = (topics: string[], retryTopics?: { delaysMs: number[] }) =>
      createConsumer({
        db,
        transport: postgresTransport({ db }),
        group: 'g',
        topics,
        handler: async () => undefined,
        ...(retryTopics ? { retryTopics } : {}),
      });
    assert.throws(() => make(['has space']), { code: 'EFF_INVALID_OPTIONS' });
    assert.doesNotThrow(() => make(['x'.repeat(249)]));
    // `<topic>-retry-1` is 8 characters longer: 245 + 8 > 249
    assert.throws(() => make(['x'.repeat(245)], { delaysMs: [1000] }), { code: 'EFF_INVALID_OPTIONS' });
    assert.doesNotThrow(() => make(['x'.repeat(241)], { delaysMs: [1000] }));
  } finally {
    await db.close();
  }
});
