import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EffectivelyError, ErrorCodes } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { publishChunk } from '../../src/outbox/publish-chunk.ts';
import {
  cutAfterOversized,
  kafkaDefaultMaxMessageBytes,
  recordBytes,
  type TopicLimits,
  topicLimits,
} from '../../src/outbox/topic-limits.ts';

const row = (key: string, size: number, topic = 't') => ({ topic, key, size });

test("a row that may be over its topic's limit ends the send when a later row of its key follows", () => {
  const limits = topicLimits(undefined);
  const big = kafkaDefaultMaxMessageBytes;
  assert.equal(cutAfterOversized([row('A', 10), row('K', big), row('B', 10), row('K', 10)], limits), 2);
  assert.equal(cutAfterOversized([row('A', 10), row('K', big), row('B', 10)], limits), undefined, 'no later K');
  assert.equal(cutAfterOversized([row('K', 10), row('K', 10)], limits), undefined, 'small rows travel together');
});

test('limits per topic, and lowered by a refusal for size', () => {
  const limits = topicLimits({ small: 100_000, '*': 16_000_000 });
  assert.ok(limits.mayBeOver(row('K', 300_000, 'small')));
  assert.ok(!limits.mayBeOver(row('K', 300_000, 'other')));
  limits.refusedForSize(row('K', 200_000, 'other'));
  assert.ok(limits.mayBeOver(row('L', 200_000, 'other')), 'a row as big as the refused one');
  assert.ok(limits.mayBeOver(row('L', 100_000, 'other')), 'smaller than the refused row: the limit may be lower still');
  limits.acknowledged([row('M', 120_000, 'other'), row('M', 300_000, 'small')]);
  assert.ok(!limits.mayBeOver(row('L', 100_000, 'other')), 'smaller than a row acknowledged since');
  assert.ok(limits.mayBeOver(row('L', 150_000, 'other')), 'bigger than every row acknowledged since');
  assert.ok(limits.mayBeOver(row('L', 300_000, 'small')), 'a topic that refused nothing keeps its given limit');
  limits.refusedForSize(row('N', 110_000, 'other'));
  assert.ok(
    limits.mayBeOver(row('L', 100_000, 'other')),
    'a refusal below an acknowledged size: the limit was lowered',
  );
});

/** The rule before: a refusal lowers the limit to the refused row's payload, and nothing more is learned. */
function refusedSizeOnly(): TopicLimits {
  let learned = kafkaDefaultMaxMessageBytes;
  return {
    mayBeOver: (r) => recordBytes(r) > learned,
    refusedForSize: (r) => {
      learned = Math.min(learned, Number(r.size));
    },
    acknowledged: () => undefined,
  };
}

/**
 * A topic that takes 100 KB: L 1 (300 KB) refused, then K 1 (200 KB), K 2 sent with the broker writing each record in a
 * batch of its own (as it does a record over the client's batch.size). The rows on the topic while K 1 is set aside.
 */
async function afterRefusal(limits: TopicLimits) {
  const written: string[] = [];
  const refusal = Object.assign(new Error('Broker: Message size too large'), { code: 10 });
  const deps = {
    send: async (rows: readonly { seq: string; size: number | string }[]) => {
      const outcomes = rows.map((r) =>
        Number(r.size) > 100_000 ? { acknowledged: false, error: refusal } : { acknowledged: true },
      );
      for (const [i, r] of rows.entries()) if (outcomes[i]!.acknowledged) written.push(r.seq);
      if (outcomes.some((o) => !o.acknowledged)) {
        throw new EffectivelyError(ErrorCodes.EFF_TRANSPORT, 'kafka send failed', {
          retryable: true,
          cause: refusal,
          details: { outcomes },
        });
      }
    },
    refuse: async () => undefined,
    blocked: new Set<string>(),
    logger: silentLogger,
    limits,
  };
  const at = (seq: string, key: string, size: number) => ({ seq, key, topic: 't', size });
  await publishChunk([at('L1', 'L', 300_000)], deps);
  await publishChunk([at('K1', 'K', 200_000), at('K2', 'K', 10)], deps);
  return written;
}

test('after a refusal for size, rows as big as one acknowledged since travel together again', async () => {
  const limits = topicLimits(undefined);
  limits.refusedForSize(row('L', 300_000));
  const sends: number[] = [];
  const rows = Array.from({ length: 10 }, (_, i) => ({ seq: String(i), key: 'K', topic: 't', size: 1000 }));
  await publishChunk(rows, {
    send: async (sent) => {
      sends.push(sent.length);
    },
    refuse: async () => undefined,
    blocked: new Set<string>(),
    logger: silentLogger,
    limits,
  });
  assert.deepEqual(sends, [1, 9], 'the first alone (nothing acknowledged yet), then the rest in one send');
});

test("a row smaller than one refused for size is sent apart from its key's later rows until a row its size passed", async () => {
  assert.deepEqual(await afterRefusal(topicLimits(undefined)), []);
});

test("naive twin: the limit learned as the refused row's size lets K 2 go beside K 1, and K 2 is written", async () => {
  assert.deepEqual(await afterRefusal(refusedSizeOnly()), ['K2']);
});

test('the estimate counts the broker overhead, key and headers', () => {
  const bare = recordBytes({ topic: 't', key: '', size: 0 });
  assert.ok(bare > 61 + 36);
  assert.equal(recordBytes({ topic: 't', key: 'ab', size: 5, headers: { h: 'xyz' } }), bare + 2 + 5 + 10 + 1 + 3);
});

test('maxMessageBytes must be positive integers', () => {
  assert.throws(() => topicLimits(0), { code: 'EFF_INVALID_OPTIONS' });
  assert.throws(() => topicLimits({ t: 1.5 }), { code: 'EFF_INVALID_OPTIONS' });
});
