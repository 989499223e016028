// What a consumer tells at start: that its dedup rows will never be purged when no retention is set (the table grows
// without bound), and when partitions are assigned (onAssign, and an info line). PGlite in process.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import type { ConsumerOptions } from '../../src/consumer/options.ts';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import type { Logger } from '../../src/observability/logger.ts';
import type { TopicPartition } from '../../src/transport/port.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { eventually } from '../support/fixtures.ts';

function recording(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (message: string) => void lines.push(`${level} ${message}`);
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

test('a consumer without retention warns at start; retention false or set does not; onAssign says when it is ready', async (t) => {
  const db = await pgliteDb();
  t.after(() => db.close());
  await migrate(db);
  const transport = postgresTransport({ db, pollIntervalMs: 20 });
  await transport.admin().createTopics([{ topic: 'orders', partitions: 2 }]);
  const start = async (group: string, extra: Partial<ConsumerOptions>) => {
    const logger = recording();
    const assigned: TopicPartition[][] = [];
    const consumer = createConsumer({
      db,
      transport,
      group,
      topics: ['orders'],
      logger,
      handler: async () => undefined,
      onAssign: (partitions) => assigned.push(partitions),
      ...extra,
    });
    t.after(() => consumer.close());
    await consumer.start();
    return { logger, assigned };
  };
  const warned = (logger: { lines: string[] }) =>
    logger.lines.some((l) => l.startsWith('warn dedup rows are never purged'));

  const none = await start('g-none', {});
  assert.equal(warned(none.logger), true, 'no retention: a warning');
  const off = await start('g-off', { retention: false });
  assert.equal(warned(off.logger), false, 'retention false: the user purges, no warning');
  const set = await start('g-set', { retention: { keepMs: 7 * 86_400_000 } });
  assert.equal(warned(set.logger), false);

  await eventually(async () => none.assigned.length > 0, 10_000, 'partitions assigned');
  assert.ok(none.assigned[0]!.every((p) => p.topic === 'orders'));
  assert.ok(none.logger.lines.includes('info partitions assigned'));
  const { rows } = await db.query<{ keep: string | null }>(
    "SELECT dedup_keep_ms::text AS keep FROM effectively.consumer_groups WHERE name = 'g-set'",
  );
  assert.equal(rows[0]?.keep, String(7 * 86_400_000), 'the retention redrive checks is stored');
});
