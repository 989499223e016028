// Keys in parallel hold a connection per lane (and per partition in flight). With the defaults (`concurrency.max` 16,
// `pgDb()`'s pool of 4) the lanes held every connection, and a handler that took one more from the same pool waited
// for ever. The consumer says so at start; a pool larger than what it runs at once gets no warning.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import { pgDb } from '../../src/db/pg.ts';
import { type Logger, silentLogger } from '../../src/observability/logger.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

async function warningsAtStart(t: import('node:test').TestContext, pool: number, max: number): Promise<string[]> {
  const { schema } = await freshSchema(t);
  const db = pgDb({ max: pool });
  t.after(() => db.close());
  const transport = postgresTransport({ db, schema, pollIntervalMs: 50, logger: silentLogger });
  await transport.admin().createTopics([{ topic: 'orders', partitions: 1 }]);
  const warnings: string[] = [];
  const logger: Logger = { ...silentLogger, warn: (message) => warnings.push(message) };
  const consumer = createConsumer({
    db,
    transport,
    group: 'g',
    topics: ['orders'],
    schema,
    logger,
    retention: false,
    concurrency: { mode: 'key', max },
    handler: async () => undefined,
  });
  await consumer.start();
  await consumer.close();
  return warnings.filter((message) => message.includes('pool'));
}

test('keys in parallel: a pool no larger than the lanes is warned about at start', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  assert.equal((await warningsAtStart(t, 4, 16)).length, 1);
});

test('twin: a pool larger than the lanes gets no warning', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  assert.equal((await warningsAtStart(t, 6, 4)).length, 0);
});
