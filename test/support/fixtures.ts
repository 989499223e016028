import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { pgDb } from '../../src/db/pg.ts';
import type { Db, Queryable } from '../../src/db/port.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import type { Transport } from '../../src/transport/port.ts';

export function randomName(prefix: string): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

/** A migrated schema of its own for one test, dropped afterwards (kept when the test failed, for a look). */
export async function freshSchema(t: TestContext): Promise<{ db: Db; schema: string }> {
  // sized by the library (4): a consumer of more lanes or partitions in flight grows it at start
  const db = pgDb();
  const schema = randomName('t');
  await migrate(db, { schema });
  t.after(async () => {
    if (process.exitCode === undefined || process.exitCode === 0) {
      await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    }
    await db.close();
  });
  return { db, schema };
}

/** A topic of its own for one test, deleted afterwards. */
export async function freshTopic(t: TestContext, partitions = 3): Promise<{ transport: Transport; topic: string }> {
  const transport = kafkaTransport({ clientId: 'effectively-test' });
  const admin = transport.admin();
  const topic = randomName('topic').replace('_', '-');
  await admin.createTopics([{ topic, partitions }]);
  t.after(async () => {
    await admin.deleteTopics([topic]).catch(() => undefined);
    await admin.close();
  });
  return { transport, topic };
}

/** Polls `check` until it returns true or the time is up. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 30_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Outbox rows of `schema` matching `where` (SQL; every row by default). */
export async function outboxCount(db: Queryable, schema: string, where = 'true'): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.outbox WHERE ${where}`);
  return rows[0]?.n ?? 0;
}

/** A table of text ids of its own in `schema` (its qualified name): what a handler's writes leave, for a test to read. */
export async function idTable(db: Db, schema: string): Promise<string> {
  const name = `${schema}.${randomName('rows')}`;
  await db.query(`CREATE TABLE ${name} (id text PRIMARY KEY)`);
  return name;
}

/** The ids in an `idTable`, sorted. */
export async function idsIn(db: Queryable, name: string): Promise<string[]> {
  return (await db.query<{ id: string }>(`SELECT id FROM ${name} ORDER BY id`)).rows.map((row) => row.id);
}
