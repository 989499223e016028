// An application `onRevoke` that throws must not skip the revoke's own bookkeeping: the revoked partitions' last
// positions are sent, and nothing noted for them afterwards is. Before, a throwing callback left them noted; the
// member's next commit (its timer) sent them in the next generation and moved the new owner's committed offset back.
// Real broker. The twin is the same run with a callback that does not throw.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { silentLogger } from '../../src/observability/logger.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import type { Consumer } from '../../src/transport/port.ts';
import { positionAfter } from '../../src/transport/position.ts';
import { eventually, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function twoMembers(t: TestContext, throwing: boolean) {
  const fast = kafkaTransport({ clientId: 'effectively-test', logger: silentLogger });
  // The first member's positions wait 8 s between commits: a stale one would go out after the rebalance.
  const slow = kafkaTransport({ clientId: 'effectively-test', logger: silentLogger, commitIntervalMs: 8000 });
  const admin = fast.admin();
  const topic = randomName('revoke').replace('_', '-');
  const group = randomName('g');
  await admin.createTopics([{ topic, partitions: 2 }]);
  t.after(async () => {
    await admin.deleteTopics([topic]).catch(() => undefined);
    await admin.close();
  });
  const producer = fast.producer();
  t.after(() => producer.close());
  const produce = (from: number) =>
    producer.send(
      [0, 1].flatMap((partition) =>
        Array.from({ length: 100 }, (_, n) => ({
          topic,
          key: `k${partition}-${from + n}`,
          value: Buffer.from('x'),
          headers: {},
        })),
      ),
    );
  const member = (transport: typeof fast, onRevoke?: () => Promise<void>) => {
    let handled = 0;
    let assigned = 0;
    const consumer: Consumer = transport.consumer({
      group,
      topics: [topic],
      maxBatchSize: 20,
      fromBeginning: true,
      onAssign: (partitions) => {
        assigned = partitions.length;
      },
      ...(onRevoke ? { onRevoke } : {}),
    });
    t.after(() => consumer.close());
    void consumer.run(async (batch, control) => {
      const last = batch.records.at(-1)!;
      consumer.commit([positionAfter(last)]).catch(() => undefined);
      control.resolve(last.offset);
      handled += batch.records.length;
    });
    return { consumer, handled: () => handled, assigned: () => assigned };
  };
  await produce(0);
  const first = member(slow, async () => {
    if (throwing) throw new Error('the application failed in onRevoke');
  });
  await eventually(async () => first.handled() >= 200, 60_000, 'the first member to read both partitions');
  const second = member(fast);
  await eventually(async () => second.assigned() === 1 && first.assigned() === 1, 60_000, 'one partition each');
  await produce(100);
  await eventually(async () => first.handled() + second.handled() >= 400, 60_000, 'the next 200 records');
  await sleep(9000); // past the first member's commit interval
  await second.consumer.close();
  await first.consumer.close();
  const ends = (await admin.endOffsets(topic)).map(({ offset }) => offset);
  assert.equal(
    ends.reduce((sum, end) => sum + Number(end), 0),
    400,
  );
  return { committed: (await admin.committedOffsets(group, topic)).map(({ offset }) => offset), ends };
}

test('an onRevoke that throws: the committed offsets end at the end of both partitions, none moved back', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const { committed, ends } = await twoMembers(t, true);
  assert.deepEqual(committed, ends);
});

test('twin: an onRevoke that does not throw ends at the same offsets', async (t) => {
  if (!(await needs(t, 'kafka'))) return;
  const { committed, ends } = await twoMembers(t, false);
  assert.deepEqual(committed, ends);
});
