// The relay that reads the outbox from the write-ahead log (`source: 'wal'`), on a private cluster with logical
// decoding and the real broker: rows written before the slot existed and after, in commit order per key; crashes
// around the slot's confirmation, each with a naive twin that the same fault breaks.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Db } from '../../src/db/port.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { createRelay } from '../../src/outbox/relay.ts';
import type { Transport } from '../../src/transport/port.ts';
import { eventually, freshTopic } from '../support/fixtures.ts';
import { readTopic } from '../support/read-topic.ts';
import { needs } from '../support/services.ts';
import { type WalCluster, walCluster } from '../support/wal-cluster.ts';

let cluster: WalCluster | undefined;
before(async () => {
  cluster = await walCluster();
});
after(async () => {
  await cluster?.close();
});

async function enqueue(db: Db, schema: string, topic: string, from: number, count: number, keys = 4) {
  const outbox = createOutbox({ schema });
  await db.transaction((tx) =>
    outbox.enqueue(
      tx,
      Array.from({ length: count }, (_, i) =>
        createEvent({ topic, type: 't', source: '/wal', key: `k${(from + i) % keys}`, data: { n: from + i } }),
      ),
    ),
  );
}

const numbers = (records: { value: Buffer | null }[]) =>
  records.map((record) => (JSON.parse(record.value!.toString()) as { n: number }).n);

async function outboxRows(db: Db, schema: string): Promise<number> {
  return Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.outbox`)).rows[0]?.n);
}

function walRelay(db: Db, schema: string, transport: Transport, extra: Record<string, unknown> = {}) {
  return createRelay({
    db,
    schema,
    source: 'wal',
    wal: { connectionString: cluster!.url },
    producerFactory: () => transport.producer(),
    logger: silentLogger,
    errorBackoffMs: 200,
    ...extra,
  });
}

test('rows written before the slot existed and after it: all published, each key in commit order', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const { db, schema } = await cluster!.schema();
  const { transport, topic } = await freshTopic(t, 3);
  await enqueue(db, schema, topic, 0, 300);
  const relay = walRelay(db, schema, transport);
  t.after(() => relay.close());
  await relay.start();
  for (let n = 300; n < 1000; n += 100) await enqueue(db, schema, topic, n, 100);
  await eventually(async () => (await outboxRows(db, schema)) === 0, 30_000, 'the outbox emptied');
  const records = await readTopic(transport, topic, 1000);
  const seen = numbers(records);
  assert.equal(new Set(seen).size, 1000);
  for (let key = 0; key < 4; key++) {
    const ofKey = records.filter((r) => String(r.key) === `k${key}`).map((r) => numbers([r])[0]!);
    assert.deepEqual(
      ofKey,
      [...ofKey].sort((a, b) => a - b),
      `key k${key} in commit order`,
    );
  }
  await eventually(async () => relay.stats().wal?.confirmedLsn !== null, 10_000, 'a confirmed position');
});
