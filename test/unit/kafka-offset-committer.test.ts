// The offset committer alone, with a recording sink in place of the broker: positions coalesce per partition (the
// latest call wins), one request at a time in call order, at most one per interval, flush sends what is noted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OffsetCommitter } from '../../src/transport/kafka/offset-committer.ts';
import type { TopicPartitionOffset } from '../../src/transport/port.ts';

function sink() {
  const sent: TopicPartitionOffset[][] = [];
  const answers: { resolve(): void; reject(error: Error): void }[] = [];
  const send = (offsets: TopicPartitionOffset[]) =>
    new Promise<void>((resolve, reject) => {
      sent.push(offsets);
      answers.push({ resolve, reject });
    });
  return { sent, answers, send };
}

const at = (partition: number, offset: number) => ({ topic: 't', partition, offset: String(offset) });
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

test('one request at a time: positions noted meanwhile coalesce, the latest per partition wins', async () => {
  const { sent, answers, send } = sink();
  const committer = new OffsetCommitter(send, 0);
  const first = committer.commit([at(0, 10)]);
  await tick();
  assert.deepEqual(sent, [[at(0, 10)]]);
  const later = [committer.commit([at(0, 20)]), committer.commit([at(1, 5)]), committer.commit([at(0, 30)])];
  await tick();
  assert.equal(sent.length, 1, 'nothing sent while the first request is in flight');
  assert.equal(committer.pending, 2);
  answers[0]!.resolve();
  await first;
  await tick();
  assert.deepEqual(sent[1], [at(0, 30), at(1, 5)]);
  answers[1]!.resolve();
  await Promise.all(later);
  assert.equal(committer.pending, 0);
});

test('at most one request per interval; flush sends at once and waits for the answer', async () => {
  const { sent, answers, send } = sink();
  const committer = new OffsetCommitter(send, 60_000);
  void committer.commit([at(0, 1)]);
  await tick();
  answers[0]!.resolve();
  await tick();
  void committer.commit([at(0, 2)]);
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(sent.length, 1, 'the second waits for the interval');
  let flushed = false;
  const flush = committer.flush().then(() => {
    flushed = true;
  });
  await tick();
  assert.deepEqual(sent[1], [at(0, 2)]);
  assert.equal(flushed, false, 'flush waits for the broker');
  answers[1]!.resolve();
  await flush;
  assert.equal(committer.pending, 0);
});

test('a failed request rejects the callers it carried; the next positions go in the next request', async () => {
  const { sent, answers, send } = sink();
  const committer = new OffsetCommitter(send, 0);
  const failed = committer.commit([at(0, 1)]);
  await tick();
  const next = committer.commit([at(0, 2)]);
  answers[0]!.reject(new Error('coordinator moved'));
  await assert.rejects(failed, /coordinator moved/);
  await tick();
  assert.deepEqual(sent[1], [at(0, 2)]);
  answers[1]!.resolve();
  await next;
});

test('discard: positions of partitions given up are never sent; the others still are', async () => {
  const { sent, answers, send } = sink();
  const committer = new OffsetCommitter(send, 0);
  void committer.commit([at(0, 10)]);
  await tick();
  answers[0]?.resolve();
  // noted while the member still held both partitions, then partition 0 is revoked
  void committer.commit([at(0, 20), at(1, 7)]);
  committer.discard([{ topic: 't', partition: 0 }]);
  await tick();
  assert.deepEqual(sent, [[at(0, 10)], [at(1, 7)]], "partition 0's late position is not sent in the next generation");
  answers[1]?.resolve();
  void committer.commit([at(1, 9)]);
  committer.discard();
  await committer.flush();
  assert.equal(sent.length, 2, 'discard() forgets everything noted');
});

test('refused: a refused position goes out again with the next request, at the interval', async () => {
  const { sent, answers, send } = sink();
  const committer = new OffsetCommitter(send, 40);
  void committer.commit([at(0, 10), at(1, 5)]);
  await tick();
  answers[0]!.resolve(); // queued; the broker refuses it later (offset commit callback)
  assert.equal(committer.refused([at(0, 10), at(1, 5)]), 2);
  assert.equal(committer.pending, 2);
  await tick();
  assert.equal(sent.length, 1, 'not before the interval');
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.deepEqual(sent[1], [at(0, 10), at(1, 5)]);
  answers[1]!.resolve();
  await committer.flush();
  assert.equal(committer.pending, 0);
});

test('refused: never over a newer position (noted or sent), nor for a discarded partition', async () => {
  const { sent, answers, send } = sink();
  const committer = new OffsetCommitter(send, 0);
  void committer.commit([at(0, 10), at(1, 5), at(2, 3)]);
  await tick();
  answers[0]!.resolve();
  await tick();
  void committer.commit([at(1, 8)]); // partition 1: a newer position sent since
  await tick();
  answers[1]!.resolve();
  await tick();
  assert.deepEqual(sent[1], [at(1, 8)]);
  void committer.commit([at(0, 12)]); // partition 0: a newer position noted since (in flight behind nothing yet)
  committer.discard([{ topic: 't', partition: 2 }]); // partition 2: given up
  assert.equal(committer.refused([at(0, 10), at(1, 5), at(2, 3)]), 0);
  await tick();
  assert.deepEqual(sent[2], [at(0, 12)], 'only the newer position of partition 0');
  answers[2]!.resolve();
  await committer.flush();
  assert.equal(sent.length, 3);
  assert.equal(committer.refused([at(1, 8)]), 1, 'the last one sent of a held partition is noted again');
  assert.equal(committer.refused([at(1, 8)]), 0, 'once');
  committer.discard();
  assert.equal(committer.refused([at(0, 12)]), 0, 'discard() forgets what was sent too');
  await committer.flush();
  assert.equal(sent.length, 3);
});
