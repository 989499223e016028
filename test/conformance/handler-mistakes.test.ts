// Handler habits on every transport. A handler that catches a SQL error without a savepoint (the "already done"
// `try { INSERT } catch {}`) leaves the transaction aborted, and PostgreSQL answers COMMIT with ROLLBACK: its record
// must fail with EFF_TX_ABORTED (a typed dead letter in the end), never count as applied, and take no other record
// down with it. The same habit through `ctx.savepoint` is safe: every record applied. A handler's own BEGIN / COMMIT on
// ctx.tx is a savepoint (nothing lost when a later record fails); one left open fails its own record, not the next.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import type { EventHandler } from '../../src/consumer/types.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgDb } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { TransientError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import type { Transport } from '../../src/transport/port.ts';
import { eventually, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';
import { transportsUnderTest } from './transports.ts';

const total = 200;
/** Every 50th record was "already done": its row exists before the run. */
const done = [49, 99, 149, 199];

for (const under of transportsUnderTest) {
  describe(`handler mistakes: ${under.name}`, () => {
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

    /** Runs `total` records of one partition through `handler`; returns the applied rows and the dead letters. */
    async function run(
      handler: (table: string) => EventHandler,
      settled: (applied: number, dead: number, outcomes: number) => boolean,
    ) {
      const own = logDb === undefined;
      const db: Db = logDb ?? pgDb({ max: 2 });
      const schema = randomName('hm');
      await migrate(db, { schema });
      const table = `${schema}.applied`;
      await db.query(`CREATE TABLE ${table} (n int PRIMARY KEY, fresh boolean NOT NULL)`);
      await db.query(`INSERT INTO ${table} (n, fresh) SELECT unnest($1::int[]), false`, [done]);
      const topic = randomName('hm').replace('_', '-');
      const admin = transport.admin();
      await admin.createTopics([{ topic, partitions: 1 }]);
      const producer = transport.producer();
      await producer.send(
        Array.from({ length: total }, (_, n) =>
          encodeEvent(createEvent({ topic, type: 'order.placed', source: '/t', key: `k${n % 7}`, data: { n } })),
        ),
      );
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
        handler: handler(table),
        onOutcome: () => {
          outcomes += 1;
        },
      });
      let outcomes = 0;
      const count = async () => {
        const { rows } = await db.query<{ n: string }>(`SELECT count(*)::int AS n FROM ${table} WHERE fresh`);
        return Number(rows[0]!.n);
      };
      try {
        await consumer.start();
        const store = deadLetterStore({ schema });
        await eventually(
          async () => settled(await count(), (await store.list(db)).length, outcomes),
          60_000,
          'all settled',
        );
        const fresh = (await db.query<{ n: number }>(`SELECT n FROM ${table} WHERE fresh ORDER BY n`)).rows;
        return { fresh: fresh.map((row) => row.n), letters: await store.list(db) };
      } finally {
        await consumer.close();
        await admin.deleteTopics([topic]);
        await admin.close();
        if (own) await db.query(`DROP SCHEMA ${schema} CASCADE`);
        if (own) await db.close();
      }
    }

    test('a handler that swallows a unique violation fails its record with EFF_TX_ABORTED; the others are applied', async (t) => {
      if (!available) return t.skip(`${under.name} is not reachable`);
      const { fresh, letters } = await run(
        (table) =>
          async (event, { tx }) => {
            const { n } = event.data as { n: number };
            try {
              await tx.query(`INSERT INTO ${table} (n, fresh) VALUES ($1, true)`, [n]);
            } catch {
              // "already done": the habit that aborts the transaction
            }
          },
        (applied, dead) => applied + dead >= total,
      );
      const expected = Array.from({ length: total }, (_, n) => n).filter((n) => !done.includes(n));
      assert.deepEqual(fresh, expected, 'every other record applied once');
      assert.deepEqual(
        letters.map((letter) => [Number(letter.offset), letter.code]),
        done.map((n) => [n, 'EFF_TX_ABORTED']),
      );
      // it fails the same way every time: dead-lettered at its first failure, not after maxAttempts (2)
      assert.deepEqual(
        letters.map((letter) => letter.attempts),
        done.map(() => 1),
      );
      assert.match(letters[0]!.reason, /savepoint/);
    });

    test('a handler that runs its own BEGIN / COMMIT / ROLLBACK on ctx.tx (a withTransaction helper) loses nothing', async (t) => {
      if (!available) return t.skip(`${under.name} is not reachable`);
      let failedOnce = false;
      const { fresh, letters } = await run(
        (table) =>
          async (event, { tx }) => {
            const { n } = event.data as { n: number };
            // the node-postgres habit, given the consumer's transaction as its client: "already done" rolled back
            await tx.query('BEGIN');
            try {
              await tx.query(`INSERT INTO ${table} (n, fresh) VALUES ($1, true)`, [n]);
              await tx.query('COMMIT');
            } catch {
              await tx.query('ROLLBACK');
            }
            // and once, a failure after the helper's COMMIT (a provider's timeout): the record must be tried again
            if (n === 120 && !failedOnce) {
              failedOnce = true;
              throw new TransientError('the provider timed out');
            }
          },
        (_applied, _dead, outcomes) => outcomes >= total,
      );
      const expected = Array.from({ length: total }, (_, n) => n).filter((n) => !done.includes(n));
      assert.deepEqual(fresh, expected, 'every other record applied once, none lost with the ROLLBACK of another');
      assert.deepEqual(letters, []);
    });

    test('a handler that leaves its own BEGIN open fails its own record, not the next one', async (t) => {
      if (!available) return t.skip(`${under.name} is not reachable`);
      const forgetful = (n: number) => n % 50 === 20; // 20, 70, 120, 170: BEGIN and no COMMIT
      const { fresh, letters } = await run(
        (table) =>
          async (event, { tx }) => {
            const { n } = event.data as { n: number };
            await tx.query('BEGIN');
            await tx.query(`INSERT INTO ${table} (n, fresh) VALUES ($1, true) ON CONFLICT DO NOTHING`, [n]);
            if (!forgetful(n)) await tx.query('COMMIT');
          },
        (applied, dead) => applied + dead >= total - done.length,
      );
      const expected = Array.from({ length: total }, (_, n) => n).filter((n) => !done.includes(n) && !forgetful(n));
      assert.deepEqual(fresh, expected, 'every other record applied once');
      assert.deepEqual(
        letters.map((letter) => [Number(letter.offset), letter.code]),
        [20, 70, 120, 170].map((n) => [n, 'EFF_NESTED_TRANSACTION']),
        'the records that left it open, and no other',
      );
    });

    test('the same habit through ctx.savepoint applies every record, none dead', async (t) => {
      if (!available) return t.skip(`${under.name} is not reachable`);
      const { fresh, letters } = await run(
        (table) =>
          async (event, { savepoint }) => {
            const { n } = event.data as { n: number };
            await savepoint((tx) => tx.query(`INSERT INTO ${table} (n, fresh) VALUES ($1, true)`, [n])).catch(
              (error: { code?: string }) => {
                if (error.code !== '23505') throw error;
              },
            );
          },
        (_applied, _dead, outcomes) => outcomes >= total,
      );
      assert.equal(fresh.length, total - done.length);
      assert.deepEqual(letters, []);
    });
  });
}
