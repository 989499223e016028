// The pipeline's sends cut to fit the producer's local queue: chunks of at most half of it, in order, and a budget that
// lets concurrent sends (a window's batches) hold no more than the queue.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TopicMessages } from '../../src/pipeline/messages.ts';
import { producerQueueLimits, QueueBudget, queueChunks } from '../../src/pipeline/queue-budget.ts';

const message = (value: string) => ({ key: null, value: Buffer.from(value), headers: {} });
const flat = (chunks: { topicMessages: TopicMessages[] }[]) =>
  chunks.flatMap((chunk) =>
    chunk.topicMessages.flatMap(({ topic, messages }) => messages.map((m) => `${topic}:${m.value!.toString()}`)),
  );

test('the client defaults unless the producer sets its queue', () => {
  assert.deepEqual(producerQueueLimits(undefined), { messages: 100_000, bytes: 1_048_576 * 1024 });
  assert.deepEqual(producerQueueLimits({ 'queue.buffering.max.messages': 10, 'queue.buffering.max.kbytes': '2' }), {
    messages: 10,
    bytes: 2048,
  });
  assert.equal(producerQueueLimits({ 'queue.buffering.max.messages': 'many' }).messages, 100_000);
});

test('chunks of at most half the queue by count, in the order given across topics', () => {
  const topicMessages: TopicMessages[] = [
    { topic: 'a', messages: ['1', '2', '3', '4', '5'].map(message) },
    { topic: 'b', messages: ['6', '7'].map(message) },
  ];
  const chunks = queueChunks(topicMessages, { messages: 6, bytes: 1_000_000 });
  assert.deepEqual(
    chunks.map((chunk) => chunk.messages),
    [3, 3, 1],
  );
  assert.deepEqual(flat(chunks), ['a:1', 'a:2', 'a:3', 'a:4', 'a:5', 'b:6', 'b:7']);
  assert.deepEqual(
    chunks[1]!.topicMessages.map(({ topic }) => topic),
    ['a', 'b'],
  );
});

test('chunks by bytes; a message larger than half the queue goes alone', () => {
  const big = message('x'.repeat(100));
  const chunks = queueChunks([{ topic: 't', messages: [message('ab'), big, message('cd'), message('ef')] }], {
    messages: 1000,
    bytes: 20,
  });
  assert.deepEqual(
    chunks.map((chunk) => chunk.bytes),
    [2, 100, 4],
  );
});

test('the budget holds a chunk back until the ones in flight leave room, and never blocks an empty queue', async () => {
  const budget = new QueueBudget({ messages: 10, bytes: 1000 });
  await budget.take({ messages: 6, bytes: 10 });
  let second = false;
  const waiting = budget.take({ messages: 6, bytes: 10 }).then(() => {
    second = true;
  });
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(second, false, 'waits while 6 of 10 are in flight');
  budget.give({ messages: 6, bytes: 10 });
  await waiting;
  assert.equal(second, true);
  budget.give({ messages: 6, bytes: 10 });
  await budget.take({ messages: 50, bytes: 5000 }); // larger than the queue: alone, at once
});

test('first come, first in: small chunks that keep coming do not keep a large one out', async () => {
  const budget = new QueueBudget({ messages: 10, bytes: 1000 });
  const small = { messages: 1, bytes: 1 };
  for (let i = 0; i < 6; i++) await budget.take(small);
  let large = false;
  const waiting = budget.take({ messages: 5, bytes: 5 }).then(() => {
    large = true;
  });
  // other partitions' small chunks: one acknowledged, the next one asks, over and over (6 in flight all along)
  const later: Promise<void>[] = [];
  for (let round = 0; round < 100 && !large; round++) {
    budget.give(small);
    later.push(budget.take(small));
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.equal(large, true, 'the large chunk got in while the small ones kept coming');
  await waiting;
  budget.give({ messages: 5, bytes: 5 });
  for (let i = 0; i < 6; i++) budget.give(small); // every small one held back behind it goes in, then leaves
  await Promise.all(later);
});
