// Issue 28 items 2 and 9: a started Kafka consumer that holds no partition a few seconds after start says, at warn,
// what it waits for and why (naming `instanceId`, static membership, the cure for a restart's wait); a line at start
// and at assignment; stats() and isRunning(). Real broker: a second member of a group on a one-partition topic gets
// none. The first member, which got the partition, is the twin: same scenario, no warning.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createConsumer } from '../../src/consumer/consumer.ts';
import type { Logger } from '../../src/observability/logger.ts';
import { eventually, freshSchema, freshTopic, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

function recording(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (message: string) => void lines.push(`${level} ${message}`);
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

test('a member with no partition after 5 s warns what it waits for, naming instanceId; the member holding it does not', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const { transport, topic } = await freshTopic(t, 1);
  const group = randomName('g');
  const member = async () => {
    const logger = recording();
    const consumer = createConsumer({
      db,
      schema,
      transport,
      group,
      topics: [topic],
      logger,
      retention: false,
      handler: async () => undefined,
    });
    t.after(() => consumer.close());
    assert.equal(consumer.isRunning(), false, 'not before start');
    await consumer.start();
    return { consumer, logger };
  };
  const first = await member();
  assert.ok(first.logger.lines.includes('info consumer started'));
  await eventually(async () => first.consumer.stats().partitions.length === 1, 30_000, 'the first member assigned');
  assert.ok(first.logger.lines.includes('info partitions assigned'));
  const second = await member();
  // The group's assignor gives the one partition to either member: the other one (the first member too, if its
  // partition moves) holds none from then on and must say so within 5 s.
  const members = [first, second];
  const waiting = (lines: string[]) =>
    lines.find((line) => line.startsWith(`warn consumer ${group} has held no partition`));
  let idle: (typeof members)[number] | undefined;
  await eventually(
    async () => {
      idle = members.find((m) => waiting(m.logger.lines) !== undefined);
      return idle !== undefined;
    },
    20_000,
    'the member without a partition says it waits',
  );
  assert.match(waiting(idle!.logger.lines)!, /waiting for the group coordinator.*`instanceId` \(static membership/);
  assert.deepEqual(idle!.consumer.stats().partitions, []);
  assert.equal(idle!.consumer.isRunning(), true);
  // the twin: the member that holds the partition never warned (the check above can tell the two apart)
  const busy = members.find((m) => m !== idle)!;
  assert.deepEqual(busy.consumer.stats().partitions, [`${topic}[0]`]);
  assert.equal(waiting(busy.logger.lines), undefined);
  await idle!.consumer.close();
  assert.equal(idle!.consumer.isRunning(), false);
});
