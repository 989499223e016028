// Redrive's steps are bounded by bytes as well as count: six letters of 4 KB at chunkBytes 10,000 go in two steps
// of three (a step of large letters no longer outgrows the producer's queue or the embedded log's parameter). Real
// PostgreSQL, the embedded log as the redrive's target.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { PermanentError } from '../../src/errors.ts';
import type { IncomingRecord } from '../../src/transport/port.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

async function steps(t: import('node:test').TestContext, chunkBytes: number | undefined) {
  const { db, schema } = await freshSchema(t);
  const transport = postgresTransport({ db, schema });
  await transport.admin().createTopics([{ topic: 'orders', partitions: 1 }]);
  const producer = transport.producer();
  t.after(() => producer.close());
  const store = deadLetterStore({ schema });
  for (let n = 0; n < 6; n++) {
    const out = encodeEvent(
      createEvent({ topic: 'orders', type: 'x', source: '/t', key: 'k', data: { n, pad: 'x'.repeat(4_000) } }),
    );
    const headers = Object.fromEntries(Object.entries(out.headers).map(([k, v]) => [k, Buffer.from(v)]));
    const record: IncomingRecord = {
      ...out,
      key: Buffer.from('k'),
      partition: 0,
      offset: String(n),
      headers,
      timestamp: 0,
    };
    await store.keep(db, {
      consumer: 'c',
      record,
      eventId: null,
      error: new PermanentError('bad'),
      attempts: 1,
      firstFailedAt: new Date(),
    });
  }
  const progress: number[] = [];
  const done = await store.redrive(
    db,
    producer,
    { consumer: 'c' },
    { ...(chunkBytes === undefined ? {} : { chunkBytes }), onProgress: (n) => void progress.push(n) },
  );
  assert.equal(done.length, 6);
  return progress;
}

test('chunkBytes 10,000: six letters of 4 KB redriven in steps of three (taken while a step holds less)', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  assert.deepEqual(await steps(t, 10_000), [3, 6]);
});

test('naive twin: bounded by count only (the default budget is far away), one step of six', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  assert.deepEqual(await steps(t, undefined), [6]);
});
