// effectively/prisma (Prisma 7, its `pg` driver adapter) against the real PostgreSQL: the ORM contract of orm-cases.ts.
// The client is generated from prisma/schema.prisma when missing (about 2 s; no engine download: the TypeScript
// client needs none, `PRISMA_SCHEMA_ENGINE_BINARY` only keeps the CLI from fetching one).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PrismaPg } from '@prisma/adapter-pg';
import { defaultDatabaseUrl, pgDb } from '../../src/db/pg.ts';
import { fromPrisma, type PrismaPgAdapter, type PrismaRaw, prismaIn } from '../../src/orm/prisma.ts';
import { needs } from '../support/services.ts';
import { type OrmHandle, ormCases } from './orm-cases.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const generated = `${root}node_modules/.cache/effectively-test-prisma/client.ts`;

/** What the tests use of the generated client (its own types live in the generated folder, made at test time). */
interface Models extends PrismaRaw {
  order: { create(args: { data: { id: string; total: number } }): Promise<unknown> };
  applied: { create(args: { data: { eventId: string; orderId: string } }): Promise<unknown> };
}
interface Client extends Models {
  $transaction<T>(work: (tx: Models) => Promise<T>): Promise<T>;
  $disconnect(): Promise<void>;
}

async function prismaClientClass(): Promise<new (options: { adapter: PrismaPgAdapter }) => Client> {
  if (!existsSync(generated)) {
    await promisify(execFile)(`${root}node_modules/.bin/prisma`, ['generate'], {
      cwd: fileURLToPath(new URL('./prisma/', import.meta.url)),
      env: {
        ...process.env,
        PRISMA_SCHEMA_ENGINE_BINARY: '/bin/true',
        PRISMA_HIDE_UPDATE_MESSAGE: '1',
        CHECKPOINT_DISABLE: '1',
      },
    });
  }
  return ((await import(generated)) as { PrismaClient: never }).PrismaClient;
}

function handle(prisma: Models, transaction?: Client['$transaction']): OrmHandle {
  return {
    async insertOrder(id, total) {
      await prisma.order.create({ data: { id, total } });
    },
    async recordApplied(eventId, orderId) {
      await prisma.applied.create({ data: { eventId, orderId } });
    },
    async transaction(work) {
      if (!transaction) throw new Error('Prisma has no transaction inside an interactive transaction');
      await transaction((tx) => work(handle(tx), fromPrisma(tx)));
    },
  };
}

const clientHandle = (client: Client) => handle(client, (work) => client.$transaction(work));

ormCases({
  name: 'Prisma',
  checksCommit: false,
  async open(url) {
    const PrismaClient = await prismaClientClass();
    // Prisma names the schema in its statements: the test's tables are in the search_path's first schema
    const schema = /search_path=(\w+)/.exec(decodeURIComponent(url))![1]!;
    const own = new PrismaClient({ adapter: new PrismaPg({ connectionString: url }, { schema }) });
    const prismaFor = prismaIn((adapter) => new PrismaClient({ adapter }), { schema });
    return {
      own: clientHandle(own),
      within: (tx) => clientHandle(prismaFor(tx)),
      close: () => own.$disconnect(),
    };
  },
});

test('fromPrisma refuses the client itself (each statement would commit alone) and takes its interactive transaction', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const PrismaClient = await prismaClientClass();
  const client = new PrismaClient({ adapter: new PrismaPg({ connectionString: defaultDatabaseUrl() }) });
  t.after(() => client.$disconnect());
  assert.throws(() => fromPrisma(client), { code: 'EFF_INVALID_OPTIONS' });
  const n = await client.$transaction(async (tx) => (await fromPrisma(tx).query<{ n: number }>('SELECT 1 AS n')).rows);
  assert.equal(Number(n[0]!.n), 1);
});

test("fromPrisma takes prismaIn's client also after $extends (it writes in the consumer's transaction), not yours", async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const PrismaClient = await prismaClientClass();
  const own = new PrismaClient({ adapter: new PrismaPg({ connectionString: defaultDatabaseUrl() }) });
  t.after(() => own.$disconnect());
  const extend = (client: unknown) => (client as { $extends(extension: object): PrismaRaw }).$extends({});
  assert.throws(() => fromPrisma(extend(own)), { code: 'EFF_INVALID_OPTIONS' });
  const db = pgDb();
  t.after(() => db.close());
  const prismaFor = prismaIn((adapter) => new PrismaClient({ adapter }));
  const mark = await db.transaction(async (tx) => {
    await tx.query("SET LOCAL effectively.test_mark = 'the consumer''s'");
    const { rows } = await fromPrisma(extend(prismaFor(tx))).query<{ mark: string | null }>(
      "SELECT current_setting('effectively.test_mark', true) AS mark",
    );
    return rows[0]!.mark;
  });
  assert.equal(mark, "the consumer's", "its statement ran in the consumer's transaction");
});
