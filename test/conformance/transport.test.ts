// One suite, every transport: what the consumer and relay rely on from a broker.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type {
  Batch,
  BatchControl,
  Consumer,
  IncomingRecord,
  OutgoingRecord,
  Transport,
} from '../../src/transport/port.ts';
import { positionAfter } from '../../src/transport/position.ts';
import { eventually, randomName } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';
import { transportsUnderTest } from './transports.ts';

const record = (topic: string, key: string, value: Buffer | string, headers: Record<string, string | Buffer> = {}) =>
  ({ topic, key, value: Buffer.from(value), headers }) satisfies OutgoingRecord;

for (const under of transportsUnderTest) {
  describe(`transport conformance: ${under.name}`, () => {
    let transport: Transport;
    let close = async () => undefined as void;
    const cleanups: (() => Promise<unknown>)[] = [];
    let available = true;

    before(async () => {
      for (const service of under.needs) {
        if (!(await needs({ skip: () => undefined } as never, service))) available = false;
      }
      if (!available) return;
      ({ transport, close } = await under.open());
    });
    after(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
      await close();
    });

    async function topic(partitions = 1): Promise<string> {
      const name = randomName('conf').replace('_', '-');
      const admin = transport.admin();
      await admin.createTopics([{ topic: name, partitions }]);
      cleanups.push(async () => {
        await admin.deleteTopics([name]).catch(() => undefined);
        await admin.close();
      });
      return name;
    }

    async function send(records: OutgoingRecord[]) {
      const producer = transport.producer();
      await producer.send(records);
      await producer.close();
    }

    /** Starts a consumer that collects records; `onBatch` decides how much to resolve and commit (all by default). */
    async function collect(
      name: string,
      group: string,
      onBatch?: (batch: Batch, control: BatchControl) => Promise<void>,
      hooks: { onAssign?: (n: number) => void } = {},
    ) {
      const seen: IncomingRecord[] = [];
      const consumer = transport.consumer({
        group,
        topics: [name],
        maxBatchSize: 100,
        fromBeginning: true,
        sessionTimeoutMs: 6000,
        ...(hooks.onAssign ? { onAssign: (p: unknown[]) => hooks.onAssign?.(p.length) } : {}),
      });
      cleanups.push(() => consumer.close());
      await consumer.run(async (batch, control) => {
        if (onBatch) return onBatch(batch, control);
        seen.push(...batch.records);
        const last = batch.records.at(-1)!;
        await consumer.commit([positionAfter(last)]);
        control.resolve(last.offset);
      });
      return { consumer, seen };
    }

    const skipUnless = (t: { skip(message: string): void }) => {
      if (!available) t.skip(`${under.name} is not reachable`);
      return available;
    };

    test('keeps order per key and round-trips keys, binary values and binary headers', async (t) => {
      if (!skipUnless(t)) return;
      const name = await topic(3);
      const binary = Buffer.from([0, 255, 1, 254, 10, 13]);
      const records = Array.from({ length: 60 }, (_, i) =>
        record(name, `key-${i % 4}`, Buffer.concat([binary, Buffer.from(String(i))]), { n: String(i), raw: binary }),
      );
      await send(records);
      const { seen } = await collect(name, randomName('g'));
      await eventually(async () => seen.length >= 60, 30_000, 'all records');
      for (let k = 0; k < 4; k++) {
        const mine = seen.filter((r) => r.key?.toString() === `key-${k}`).map((r) => Number(r.headers.n!.toString()));
        assert.deepEqual(
          mine,
          [...mine].sort((a, b) => a - b),
          `order of key-${k}`,
        );
        assert.equal(mine.length, 15);
      }
      const one = seen.find((r) => r.headers.n?.toString() === '7')!;
      assert.deepEqual(one.value, Buffer.concat([binary, Buffer.from('7')]));
      assert.deepEqual(one.headers.raw, binary);
    });

    test('round-trips a 1 MB value', async (t) => {
      if (!skipUnless(t)) return;
      const name = await topic();
      const big = Buffer.alloc(1_000_000, 7);
      big[123_456] = 42;
      await send([record(name, 'big', big)]);
      const { seen } = await collect(name, randomName('g'));
      await eventually(async () => seen.length === 1, 30_000, 'the big record');
      assert.ok(seen[0]!.value!.equals(big));
    });

    test('commits no offset beyond applied work, and redelivers the rest after a crash', async (t) => {
      if (!skipUnless(t)) return;
      const name = await topic();
      const group = randomName('g');
      await send(Array.from({ length: 10 }, (_, i) => record(name, 'k', String(i))));
      let first: Consumer | undefined;
      let applied = 0;
      ({ consumer: first } = await collect(name, group, async (batch, control) => {
        // Applies (and commits) only the first five, then "crashes" before the rest.
        const five = batch.records.slice(0, 5 - applied);
        if (five.length === 0) return;
        applied += five.length;
        const last = five.at(-1)!;
        await first!.commit([positionAfter(last)]);
        control.resolve(last.offset);
      }));
      await eventually(async () => applied === 5, 30_000, 'five applied');
      await first.close();
      const admin = transport.admin();
      cleanups.push(() => admin.close());
      assert.equal((await admin.committedOffsets(group, name))[0]?.offset, '5');
      const { seen } = await collect(name, group);
      await eventually(async () => seen.length >= 5, 30_000, 'the rest redelivered');
      assert.deepEqual(
        seen.map((r) => r.value!.toString()),
        ['5', '6', '7', '8', '9'],
      );
    });

    test('pause holds a partition, resume releases it, seek rewinds it', async (t) => {
      if (!skipUnless(t)) return;
      const name = await topic(2);
      await send(Array.from({ length: 5 }, (_, i) => record(name, 'k', String(i))));
      const { consumer, seen } = await collect(name, randomName('g'));
      await eventually(async () => seen.length === 5, 30_000, 'first five');
      const partition = seen[0]!.partition;
      const ofK = () => seen.filter((r) => r.key?.toString() === 'k').map((r) => r.value!.toString());
      consumer.pause([{ topic: name, partition }]);
      await send(Array.from({ length: 3 }, (_, i) => record(name, 'k', String(5 + i))));
      // Sent after those: markers on twenty keys, some on the other partition. One of them delivered proves the
      // consumer fetched and delivered meanwhile: had the pause not held, the three sent before would have come too.
      await send(Array.from({ length: 20 }, (_, i) => record(name, `m${i}`, `m${i}`)));
      await eventually(
        async () => seen.some((r) => r.partition !== partition),
        30_000,
        'a marker of the other partition',
      );
      assert.deepEqual(
        seen.filter((r) => r.partition === partition).length,
        5,
        'nothing of the paused partition delivered while paused',
      );
      consumer.resume([{ topic: name, partition }]);
      await eventually(async () => ofK().length === 8, 30_000, 'the three after resume');
      consumer.seek({ topic: name, partition, offset: '6' });
      await eventually(async () => ofK().length === 10, 30_000, 'the two after seek');
      assert.deepEqual(ofK(), ['0', '1', '2', '3', '4', '5', '6', '7', '6', '7']);
    });

    test('two members of one group share the partitions and together read everything once', async (t) => {
      if (!skipUnless(t)) return;
      const name = await topic(4);
      const group = randomName('g');
      let assignedB = 0;
      const a = await collect(name, group);
      const b = await collect(name, group, undefined, {
        onAssign: (n) => {
          assignedB += n;
        },
      });
      await eventually(async () => assignedB > 0, 30_000, 'the second member to get partitions');
      // let the group settle (the first member gives partitions back), then produce
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await send(Array.from({ length: 40 }, (_, i) => record(name, `key-${i}`, String(i))));
      await eventually(async () => a.seen.length + b.seen.length >= 40, 30_000, 'all forty');
      await new Promise((resolve) => setTimeout(resolve, 500));
      const values = [...a.seen, ...b.seen].map((r) => Number(r.value!.toString())).sort((x, y) => x - y);
      assert.deepEqual(
        values,
        Array.from({ length: 40 }, (_, i) => i),
      );
      assert.ok(a.seen.length > 0 && b.seen.length > 0, `split ${a.seen.length}/${b.seen.length}`);
    });

    test('an empty topic gives empty polls, no batches and no errors', async (t) => {
      if (!skipUnless(t)) return;
      const name = await topic();
      // Every batch counted, empty or not.
      const batches: number[] = [];
      let assigned = 0;
      await collect(
        name,
        randomName('g'),
        async (batch, control) => {
          batches.push(batch.records.length);
          const last = batch.records.at(-1);
          if (last) control.resolve(last.offset);
        },
        {
          onAssign: (n) => {
            assigned += n;
          },
        },
      );
      await eventually(async () => assigned > 0, 30_000, 'the partition assigned');
      // The consumer polls the empty partition meanwhile; the one record sent then shows it would have seen a batch.
      await send([record(name, 'k', 'marker')]);
      await eventually(async () => batches.length > 0, 30_000, 'the marker');
      assert.deepEqual(batches, [1], 'no batch before the marker, empty or not');
    });

    test('close waits for the batch in flight', async (t) => {
      if (!skipUnless(t)) return;
      const name = await topic();
      await send([record(name, 'k', 'slow')]);
      let started = false;
      let finished = false;
      const { consumer } = await collect(name, randomName('g'), async (batch, control) => {
        started = true;
        await new Promise((resolve) => setTimeout(resolve, 700));
        finished = true;
        control.resolve(batch.records.at(-1)!.offset);
      });
      await eventually(async () => started, 30_000, 'the batch to start');
      await consumer.close();
      assert.equal(finished, true);
    });
  });
}
