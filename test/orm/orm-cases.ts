// The ORM contract, one suite run for each adapter (Kysely, Drizzle, Prisma) against the real PostgreSQL:
// 1. a business write rolled back in the ORM's own transaction takes the outbox row and the effect with it;
// 2. a handler writing through the ORM in the consumer's transaction applies once under redelivery;
// 3. a handler that swallows an ORM error fails its record with EFF_TX_ABORTED;
// 4. the ORM's own transaction inside the handler is a savepoint: it never commits the consumer's transaction.
// 5. the library's patterns (ledgerEntry, versionGuard) through from…(tx) read the rows a write touched.
// Each guarantee has a naive twin: the same ORM on its own pool, outside the library's transaction, shows the fault.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { ledgerEntry, versionGuard } from '../../src/consumer/patterns.ts';
import type { EventHandler } from '../../src/consumer/types.ts';
import { migrate } from '../../src/db/migrate.ts';
import { defaultDatabaseUrl, pgDb } from '../../src/db/pg.ts';
import type { Db, Queryable } from '../../src/db/port.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { createEffects } from '../../src/effects/ledger.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { TransientError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

/** The business writes of the suite, through one ORM bound to one place (a pool, a transaction). */
export interface OrmHandle {
  insertOrder(id: string, total: number): Promise<void>;
  /** One row per application of an event (no key: a second application is a second row). */
  recordApplied(eventId: string, orderId: string): Promise<void>;
  /** The ORM's own transaction; `work` gets it as a handle and as the library's `Queryable` (the adapter's `from…`). */
  transaction(work: (orm: OrmHandle, tx: Queryable) => Promise<void>): Promise<void>;
}

export interface OrmKit {
  name: string;
  /** Whether the ORM itself notices a COMMIT that PostgreSQL answered with ROLLBACK (and throws). */
  checksCommit: boolean;
  /** The ORM on a pool of its own at `url` (the user's usual client), and bound to a library transaction. */
  open(url: string): Promise<{ own: OrmHandle; within(tx: Queryable): OrmHandle; close(): Promise<void> }>;
}

const tables = `CREATE TABLE orders (id text PRIMARY KEY, total int NOT NULL);
  CREATE TABLE applied (event_id text NOT NULL, order_id text NOT NULL);
  CREATE TABLE facts (id text PRIMARY KEY)`;

class Rollback extends Error {}

export function ormCases(kit: OrmKit): void {
  describe(`ORM adapter: ${kit.name}`, () => {
    let db: Db;
    let orm: Awaited<ReturnType<OrmKit['open']>>;
    let schema: string;
    let available = true;
    before(async () => {
      if (!(await needs({ skip: () => undefined } as never, 'postgres'))) {
        available = false;
        return;
      }
      schema = randomName('orm');
      // the business tables live in the test's schema, found through search_path by every ORM
      const url = new URL(defaultDatabaseUrl());
      url.searchParams.set('options', `-c search_path=${schema}`);
      db = pgDb({ connectionString: url.href, max: 4 });
      await migrate(db, { schema });
      await db.query(tables);
      orm = await kit.open(url.href);
    });
    after(async () => {
      if (!available) return;
      await orm.close();
      await db.query(`DROP SCHEMA ${schema} CASCADE`);
      await db.close();
    });

    const count = async (sql: string, params: unknown[] = []) =>
      Number((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params)).rows[0]!.n);

    /** In the ORM's own transaction: the order through the ORM, its event and its e-mail through the library. */
    async function placeOrder(id: string, enqueueOn: (tx: Queryable) => Queryable, rollback: boolean) {
      const outbox = createOutbox({ schema });
      const effects = createEffects({ schema });
      const event = createEvent({ type: 'order.placed', source: '/orm', key: id, topic: 'orm-orders', data: { id } });
      await orm.own
        .transaction(async (tx, queryable) => {
          await tx.insertOrder(id, 3);
          await outbox.enqueue(enqueueOn(queryable), event);
          await effects.schedule(enqueueOn(queryable), { key: id, kind: 'email:confirmation', payload: { id } });
          if (rollback) throw new Rollback('the business write fails after the enqueue');
        })
        .catch((error: unknown) => {
          if (!(error instanceof Rollback)) throw error;
        });
      return {
        orders: await count('orders WHERE id = $1', [id]),
        outbox: await count(`${schema}.outbox WHERE key = $1`, [id]),
        effects: await count(`${schema}.effects WHERE key = $1`, [id]),
      };
    }

    test('enqueue and schedule in the ORM transaction: committed together, rolled back together', async (t) => {
      if (!available) return t.skip('no PostgreSQL');
      const inTx = (queryable: Queryable) => queryable;
      assert.deepEqual(await placeOrder(randomName('o'), inTx, false), { orders: 1, outbox: 1, effects: 1 });
      assert.deepEqual(await placeOrder(randomName('o'), inTx, true), { orders: 0, outbox: 0, effects: 0 });
    });

    test('naive twin: enqueue and schedule on a connection of their own survive the rollback', async (t) => {
      if (!available) return t.skip('no PostgreSQL');
      const outside = () => db;
      // Bruno's e-mail for an order that does not exist
      assert.deepEqual(await placeOrder(randomName('o'), outside, true), { orders: 0, outbox: 1, effects: 1 });
    });

    test("the library's patterns through from…(tx) tell applied from duplicate and stale (the row count is right)", async (t) => {
      if (!available) return t.skip('no PostgreSQL');
      const id = randomName('o');
      const seen: string[] = [];
      await orm.own.transaction(async (tx, queryable) => {
        await tx.insertOrder(id, 1);
        const entry = { table: 'facts', entry: { id } };
        seen.push(await ledgerEntry(queryable, entry), await ledgerEntry(queryable, entry));
        const guard = { table: 'orders', id: { column: 'id', value: id }, version: 2, versionColumn: 'total', set: {} };
        seen.push(await versionGuard(queryable, guard), await versionGuard(queryable, guard));
      });
      // a caller that charges only when 'applied' would never charge with a count of 0
      assert.deepEqual(seen, ['applied', 'duplicate', 'applied', 'stale']);
    });

    test("the library's reads through from…(tx) see its own columns, whatever the ORM's plugins rename", async (t) => {
      if (!available) return t.skip('no PostgreSQL');
      const key = randomName('o');
      const effects = createEffects({ schema });
      let id = '';
      await orm.own.transaction(async (_tx, queryable) => {
        id = await effects.schedule(queryable, { key, kind: 'email:confirmation', payload: { key } });
      });
      await db.query(
        `UPDATE ${schema}.effects SET status = 'dead', attempts = 2, last_error = 'refused' WHERE id = $1`,
        [id],
      );
      let seen: unknown;
      await orm.own.transaction(async (_tx, queryable) => {
        seen = await effects.list(queryable, { key });
      });
      assert.deepEqual(seen, await effects.list(db, { key }), 'every field of the effect, as read on the library Db');
    });

    test('naive twin: a Queryable whose count is the rows returned says a fresh fact is a duplicate', async (t) => {
      if (!available) return t.skip('no PostgreSQL');
      const id = randomName('o');
      let first = '';
      await orm.own.transaction(async (_tx, queryable) => {
        const rowsOnly: Queryable = {
          query: async <R extends Record<string, unknown>>(text: string, params?: unknown[]) => {
            const { rows } = await queryable.query<R>(text, params);
            return { rows, rowCount: rows.length }; // fromPrisma before: $queryRawUnsafe alone
          },
        };
        first = await ledgerEntry(rowsOnly, { table: 'facts', entry: { id } });
      });
      assert.equal(first, 'duplicate');
      assert.equal(await count('facts WHERE id = $1', [id]), 1, 'yet it was written: the caller skips its charge');
    });

    /**
     * Runs events through a consumer (the `postgres` log on the server) with `handler`; each event is on the topic
     * `copies` times (more than once: a redelivery). Waits for `settled` (outcomes committed, records dead-lettered)
     * and returns the rows applied per event and the dead letters.
     */
    async function consume(
      total: number,
      copies: number,
      handler: EventHandler,
      settled: (outcomes: number, dead: number) => boolean,
    ) {
      const transport = postgresTransport({ db, schema, heartbeatMs: 150, leaseMs: 1500, pollIntervalMs: 20 });
      const topic = randomName('orm').replace('_', '-');
      const admin = transport.admin();
      await admin.createTopics([{ topic, partitions: 1 }]);
      const events = Array.from({ length: total }, (_, n) =>
        createEvent({ topic, type: 'order.paid', source: '/orm', key: `k${n % 3}`, data: { order: `${topic}-${n}` } }),
      );
      const producer = transport.producer();
      await producer.send(Array.from({ length: copies }, () => events.map((event) => encodeEvent(event))).flat());
      await producer.close();
      let outcomes = 0;
      const consumer = createConsumer({
        db,
        transport,
        group: randomName('g'),
        topics: [topic],
        schema,
        logger: silentLogger,
        maxAttempts: 3,
        retry: { baseMs: 5, capMs: 20 },
        handler,
        onOutcome: () => {
          outcomes += 1;
        },
      });
      try {
        await consumer.start();
        const store = deadLetterStore({ schema });
        const dead = async () => (await store.list(db)).filter((letter) => letter.topic === topic).length;
        await eventually(async () => settled(outcomes, await dead()), 30_000, 'every record settled');
      } finally {
        await consumer.close();
        await admin.close();
      }
      const { rows } = await db.query<{ order_id: string; n: number }>(
        'SELECT order_id, count(*)::int AS n FROM applied WHERE order_id LIKE $1 GROUP BY order_id ORDER BY order_id',
        [`${topic}-%`],
      );
      const letters = (await deadLetterStore({ schema }).list(db)).filter((letter) => letter.topic === topic);
      return { topic, applications: rows.map((row) => row.n), letters, outcomes };
    }

    /** A handler whose consumer transaction fails once per event after the write: a redelivery of what it wrote. */
    function failingOnce(write: (event: { id: string; order: string }, tx: Queryable) => Promise<void>): EventHandler {
      const seen = new Set<string>();
      return async (event, ctx) => {
        const { order } = event.data as { order: string };
        await write({ id: event.id, order }, ctx.tx);
        if (!seen.has(event.id)) {
          seen.add(event.id);
          throw new TransientError('the connection dropped before COMMIT');
        }
      };
    }

    test('a handler writing through the ORM in the consumer transaction applies each event once', async (t) => {
      if (!available) return t.skip('no PostgreSQL');
      const total = 12;
      const run = await consume(
        total,
        2,
        failingOnce((event, tx) => orm.within(tx).recordApplied(event.id, event.order)),
        (outcomes) => outcomes >= 2 * total,
      );
      assert.deepEqual(run.applications, Array(total).fill(1), 'one application per event');
      assert.deepEqual(run.letters, []);
    });

    test('naive twin: the same handler through the ORM on its own pool applies events twice', async (t) => {
      if (!available) return t.skip('no PostgreSQL');
      const total = 12;
      const run = await consume(
        total,
        2,
        failingOnce((event) => orm.own.recordApplied(event.id, event.order)),
        (outcomes) => outcomes >= 2 * total,
      );
      assert.equal(run.applications.length, total);
      assert.ok(
        run.applications.every((n) => n >= 2),
        `each failed attempt kept its write, Ana gets two or more: ${run.applications}`,
      );
    });

    test('a handler that swallows an ORM error (and carries on, or not) fails its record with EFF_TX_ABORTED', async (t) => {
      if (!available) return t.skip('no PostgreSQL');
      const total = 9;
      const taken = randomName('taken');
      await orm.own.insertOrder(taken, 1);
      const run = await consume(
        total,
        1,
        async (event, ctx) => {
          const { order } = event.data as { order: string };
          const within = orm.within(ctx.tx);
          // "already done", swallowed: the last statement (-4), or with more work after it (-6)
          if (order.endsWith('-6')) await within.insertOrder(taken, 2).catch(() => undefined);
          await within.recordApplied(event.id, order);
          if (order.endsWith('-4')) await within.insertOrder(taken, 2).catch(() => undefined);
        },
        (outcomes, dead) => outcomes >= total - 2 && dead >= 2,
      );
      assert.equal(run.applications.length, total - 2, 'every other record applied, the failing ones not at all');
      assert.deepEqual(run.letters.map((letter) => [Number(letter.offset), letter.code]).sort(), [
        [4, 'EFF_TX_ABORTED'],
        [6, 'EFF_TX_ABORTED'],
      ]);
      // the swallowed unique violation is named as the cause, not the "transaction is aborted" that followed it
      assert.ok(run.letters.every((letter) => /savepoint/.test(letter.reason)));
    });

    test('naive twin: the same swallow in an ORM transaction of its own', async (t) => {
      if (!available) return t.skip('no PostgreSQL');
      const taken = randomName('taken');
      await orm.own.insertOrder(taken, 1);
      const order = randomName('lost');
      const swallowing = orm.own.transaction(async (tx) => {
        await tx.recordApplied(order, order);
        await tx.insertOrder(taken, 2).catch(() => undefined);
      });
      if (kit.checksCommit) {
        await assert.rejects(swallowing, `${kit.name} reads PostgreSQL's ROLLBACK answer to its COMMIT`);
      } else {
        await swallowing; // no error anywhere: the ORM took PostgreSQL's ROLLBACK answer to its COMMIT for a commit
      }
      assert.equal(await count('applied WHERE order_id = $1', [order]), 0, 'the row the ORM wrote is gone');
    });

    test('a nested ORM transaction that swallowed a failed statement rejects with EFF_TX_ABORTED; the rest goes on', async (t) => {
      if (!available) return t.skip('no PostgreSQL');
      const [taken, undone, outer, after] = [
        randomName('taken'),
        randomName('undone'),
        randomName('outer'),
        randomName('after'),
      ];
      await orm.own.insertOrder(taken, 1);
      let rejected: unknown;
      await db.transaction(async (tx) => {
        const within = orm.within(tx);
        await within.insertOrder(outer, 1);
        await within
          .transaction(async (nested) => {
            await nested.insertOrder(undone, 1);
            await nested.insertOrder(taken, 2).catch(() => undefined); // "already done", swallowed in the savepoint
          })
          .catch((error: unknown) => {
            rejected = error;
          });
        await within.insertOrder(after, 1);
      });
      // the ORM's own ROLLBACK after the failed COMMIT (RELEASE) must not replace the cause with EFF_NESTED_TRANSACTION
      const codes: unknown[] = [];
      for (let at = rejected, depth = 0; at instanceof Error && depth < 6; at = at.cause, depth++) {
        codes.push((at as { code?: unknown }).code);
      }
      assert.ok(codes.includes('EFF_TX_ABORTED'), `codes along the causes: ${codes.join(', ')}`);
      assert.ok(!codes.includes('EFF_NESTED_TRANSACTION'), `codes along the causes: ${codes.join(', ')}`);
      assert.equal(await count('orders WHERE id = ANY($1)', [[outer, after]]), 2, 'the outer work goes on');
      assert.equal(await count('orders WHERE id = $1', [undone]), 0, 'the nested work is undone');
    });

    test('two ORM transactions at once in a handler: the second is refused, the first keeps its work', async (t) => {
      if (!available) return t.skip('no PostgreSQL');
      const [first, second] = [randomName('first'), randomName('second')];
      const settled = await db.transaction(async (tx) =>
        Promise.allSettled(
          [first, second].map((id, i) =>
            // an instance each, as `…In(ctx.tx)` made in two places of the handler
            orm
              .within(tx)
              .transaction(async (nested) => {
                await nested.insertOrder(id, 1);
                await new Promise((resolve) => setTimeout(resolve, 50 * (i + 1)));
                if (id === second) throw new Rollback('the second fails and is caught');
              }),
          ),
        ),
      );
      // before: both began (savepoints 1 and 2), the first's COMMIT released the second's savepoint, the second's
      // ROLLBACK undid both: the first resolved and its row was gone
      assert.equal(settled[0]!.status, 'fulfilled');
      assert.equal(await count('orders WHERE id = $1', [first]), 1, 'what the first committed is there');
      assert.equal(settled[1]!.status, 'rejected');
      const codes: unknown[] = [];
      for (
        let at = (settled[1] as PromiseRejectedResult).reason, depth = 0;
        at instanceof Error && depth < 6;
        depth++
      ) {
        codes.push((at as { code?: unknown }).code);
        at = at.cause;
      }
      assert.ok(codes.includes('EFF_NESTED_TRANSACTION'), `codes along the causes: ${codes.join(', ')}`);
      assert.equal(await count('orders WHERE id = $1', [second]), 0);
    });

    test("the ORM's transaction in a handler is a savepoint: it never commits the consumer's transaction", async (t) => {
      if (!available) return t.skip('no PostgreSQL');
      const [kept, undone, outer] = [randomName('kept'), randomName('undone'), randomName('outer')];
      await db
        .transaction(async (tx) => {
          const within = orm.within(tx);
          await within.insertOrder(outer, 1);
          await within.transaction(async (nested) => nested.insertOrder(kept, 1));
          await within
            .transaction(async (nested) => {
              await nested.insertOrder(undone, 1);
              throw new Rollback('nested');
            })
            .catch((error: unknown) => {
              if (!(error instanceof Rollback)) throw error;
            });
          // inside the outer transaction: the committed nested work is there, the rolled back one is not
          const seen = await tx.query<{ id: string }>('SELECT id FROM orders WHERE id = ANY($1) ORDER BY id', [
            [kept, undone, outer],
          ]);
          assert.deepEqual(seen.rows.map((row) => row.id).sort(), [kept, outer].sort());
          throw new Rollback('the consumer transaction fails');
        })
        .catch((error: unknown) => {
          if (!(error instanceof Rollback)) throw error;
        });
      assert.equal(await count('orders WHERE id = ANY($1)', [[kept, undone, outer]]), 0, 'nothing committed early');
    });
  });
}
