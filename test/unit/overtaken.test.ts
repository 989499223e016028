import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EffectivelyError, ErrorCodes } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { reportOvertaken } from '../../src/outbox/overtaken.ts';
import { publishChunk } from '../../src/outbox/publish-chunk.ts';
import { topicLimits } from '../../src/outbox/topic-limits.ts';

const row = (seq: string, key: string, size = 10) => ({ seq, key, topic: 't', size });
const refusal = Object.assign(new Error('Broker: Message size too large'), { code: 10 });
const failed = (outcomes: boolean[]) =>
  new EffectivelyError(ErrorCodes.EFF_TRANSPORT, 'kafka send failed', {
    retryable: true,
    cause: refusal,
    details: {
      outcomes: outcomes.map((ok) => (ok ? { acknowledged: true } : { acknowledged: false, error: refusal })),
    },
  });

test('a row acknowledged behind a failed row of its key is logged as EFF_KEY_OVERTAKEN', () => {
  const logged: Record<string, unknown>[] = [];
  const logger = { ...silentLogger, error: (_: string, fields?: Record<string, unknown>) => logged.push(fields!) };
  const rows = [row('1', 'K'), row('2', 'L'), row('3', 'K')];
  assert.equal(reportOvertaken(rows, failed([false, true, true]), logger), 1);
  assert.deepEqual(logged, [
    {
      code: 'EFF_KEY_OVERTAKEN',
      key: 'K',
      topic: 't',
      seq: '3',
      earlierSeq: '1',
      earlierCode: 'ERR_MSG_SIZE_TOO_LARGE',
    },
  ]);
  assert.equal(reportOvertaken(rows, failed([true, false, true]), logger), 0, 'L failed, K in order');
});

/** K 1 (2 MB, refused wherever it goes), L 2, K 3 through publishChunk; the sends made, rows refused, rows published. */
async function chunk(maxMessageBytes?: number) {
  const sends: string[][] = [];
  const refused: string[] = [];
  let overtaken = 0;
  const published = await publishChunk([row('1', 'K', 2_000_000), row('2', 'L'), row('3', 'K')], {
    send: async (rows) => {
      sends.push(rows.map((r) => r.seq));
      if (rows.some((r) => r.seq === '1')) throw failed(rows.map((r) => r.seq !== '1'));
    },
    refuse: async (r) => {
      refused.push(r.seq);
    },
    blocked: new Set(),
    logger: silentLogger,
    overtaken: (count) => {
      overtaken += count;
    },
    limits: topicLimits(maxMessageBytes),
  });
  return { sends, refused, published: published.map((r) => r.seq), overtaken };
}

test("publishChunk sends a row that may be over its topic's limit apart from its key's later rows", async () => {
  const { sends, refused, published, overtaken } = await chunk();
  assert.deepEqual(sends, [['1'], ['2']], 'K 1 alone, then what K 1 did not block');
  assert.deepEqual(refused, ['1']);
  assert.deepEqual(published, ['2']);
  assert.equal(overtaken, 0);
});

test('naive twin: a relay that takes the topic for one of 16 MB sends K 3 beside K 1, and K 3 is published', async () => {
  const { sends, published, overtaken } = await chunk(16 * 1024 * 1024);
  assert.deepEqual(sends[0], ['1', '2', '3']);
  assert.deepEqual(published, ['2', '3']);
  assert.equal(overtaken, 1, 'K 3 counted as overtaking K 1');
});
