// Issue 30: failure groups. Letters that failed for one cause share a fingerprint whatever values their messages
// carry; another class, message or top frame is another group.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { failureCause, normalizeMessage, topFrameOf } from '../../src/console/fingerprint.ts';
import { RetryHeaders } from '../../src/consumer/retry-topics.ts';

const letter = (reason: string, stack?: string) => ({
  code: 'EFF_HANDLER_FAILED',
  reason,
  headers: stack ? { [RetryHeaders.errorStack]: Buffer.from(stack) } : {},
});

test('the message without the values that differ from record to record', () => {
  assert.equal(
    normalizeMessage(
      'order 0194b6a2-8c1e-7000-9a3b-1c2d3e4f5a6b: 3 seats, "VIP" row, hash deadbeefdeadbeef01\n at 0x1f',
    ),
    'order <uuid>: <n> seats, <str> row, hash <hex> at <hex>',
  );
  assert.equal(
    topFrameOf('TypeError: x\n    at applyOrder (/app/orders.js:41:7)\n    at next (/app/x.js:1:1)'),
    'applyOrder (/app/orders.js)',
  );
  assert.equal(topFrameOf(undefined), null);
});

test('one cause, one fingerprint; another class, message or frame, another', () => {
  const a = failureCause(letter('PermanentError: order 11111111-1111-4111-8111-111111111111 has 0 seats'));
  const b = failureCause(letter('PermanentError: order 22222222-2222-4222-8222-222222222222 has 12 seats'));
  assert.equal(a.fingerprint, b.fingerprint);
  assert.deepEqual([a.errorClass, a.message, a.topFrame], ['PermanentError', 'order <uuid> has <n> seats', null]);
  const others = [
    letter('TypeError: order 11111111-1111-4111-8111-111111111111 has 0 seats'),
    letter('PermanentError: order 11111111-1111-4111-8111-111111111111 is cancelled'),
    letter('PermanentError: order 1 has 0 seats', 'PermanentError: x\n    at reserve (/app/seats.js:9:3)'),
  ].map((other) => failureCause(other).fingerprint);
  assert.equal(new Set([a.fingerprint, ...others]).size, 4);
  assert.equal(
    failureCause(letter('no class here')).errorClass,
    'EFF_HANDLER_FAILED',
    'the code when no class is named',
  );
});
