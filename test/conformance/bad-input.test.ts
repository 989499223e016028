// Bad input on every transport: each bad record ends as a typed dead letter, the good ones around it are applied,
// nothing crashes and the partition never sticks.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgDb } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { PermanentError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import type { OutgoingRecord, Transport } from '../../src/transport/port.ts';
import { eventually, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';
import { transportsUnderTest } from './transports.ts';

for (const under of transportsUnderTest) {
  describe(`bad input: ${under.name}`, () => {
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

    test('malformed JSON, no id, invalid UTF-8, a bad version header and wrong types become typed dead letters', async (t) => {
      if (!available) return t.skip(`${under.name} is not reachable`);
      // The handler's database: the log's own for the postgres transports (one transaction), the server for Kafka.
      const own = logDb === undefined;
      const db: Db = logDb ?? pgDb({ max: 2 });
      const schema = randomName('bad');
      await migrate(db, { schema });
      await db.query(`CREATE TABLE ${schema}.applied (n int NOT NULL)`);
      const topic = randomName('bad').replace('_', '-');
      const admin = transport.admin();
      await admin.createTopics([{ topic, partitions: 1 }]);
      const good = (n: number, data: unknown = { n }) =>
        encodeEvent(createEvent({ topic, type: 'order.placed', source: '/t', key: 'k', data }));
      const base = good(0);
      const { ce_id: _dropped, ...noId } = base.headers;
      const records: OutgoingRecord[] = [
        good(1),
        { ...good(2), value: Buffer.from('{"n": 2,') }, // malformed JSON
        { ...good(3), headers: noId }, // no event id
        { ...good(4), value: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) }, // invalid UTF-8
        { ...good(5), headers: { ...good(5).headers, ce_version: Buffer.from([0xde, 0xad]) } }, // garbage header
        good(6, { n: 'six' }), // wrong type: the handler refuses it as permanent
        good(7, { n: 7, blob: 'x'.repeat(5 * 1024 * 1024) }), // 5 MB: large but valid
        good(8),
      ];
      const producer = transport.producer();
      await producer.send(records);
      await producer.close();
      const consumer = createConsumer({
        db,
        transport,
        group: randomName('g'),
        topics: [topic],
        schema,
        logger: silentLogger,
        handler: async (event, { tx }) => {
          const { n } = event.data as { n: unknown };
          if (typeof n !== 'number') throw new PermanentError(`n must be a number, got ${typeof n}`);
          await tx.query(`INSERT INTO ${schema}.applied (n) VALUES ($1)`, [n]);
        },
      });
      try {
        await consumer.start();
        const applied = async () =>
          (await db.query<{ n: number }>(`SELECT n FROM ${schema}.applied ORDER BY n`)).rows.map((row) => row.n);
        await eventually(async () => (await applied()).length === 3, 60_000, 'the good records');
        assert.deepEqual(await applied(), [1, 7, 8]);
        const letters = await deadLetterStore({ schema }).list(db);
        assert.deepEqual(
          letters.map((letter) => [letter.offset, letter.code]),
          [
            ['1', 'EFF_DECODE_FAILED'],
            ['2', 'EFF_MISSING_EVENT_ID'],
            ['3', 'EFF_DECODE_FAILED'],
            ['4', 'EFF_INVALID_EVENT'],
            ['5', 'EFF_HANDLER_FAILED'],
          ],
        );
      } finally {
        await consumer.close();
        await admin.deleteTopics([topic]);
        await admin.close();
        if (own) await db.query(`DROP SCHEMA ${schema} CASCADE`);
        if (own) await db.close();
      }
    });
  });
}
