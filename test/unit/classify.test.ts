import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isPermanent } from '../../src/consumer/classify.ts';
import { EffectivelyError, ErrorCodes, PermanentError, TransientError } from '../../src/errors.ts';

class ValidationError extends Error {}

test('permanent: PermanentError, non-retryable codes, and the configured classes and codes; the rest is retried', () => {
  assert.equal(isPermanent(new PermanentError('bad seat')), true);
  assert.equal(isPermanent(new EffectivelyError(ErrorCodes.EFF_DECODE_FAILED, 'not JSON')), true);
  assert.equal(isPermanent(new TransientError('later')), false);
  assert.equal(isPermanent(new Error('unknown')), false, 'unknown errors are retried up to the limit');
  const unique = Object.assign(new Error('duplicate key'), { code: '23505' });
  assert.equal(isPermanent(unique), false);
  assert.equal(isPermanent(unique, ['23505']), true, 'a configured code');
  assert.equal(isPermanent(new ValidationError('no'), [ValidationError]), true, 'a configured class');
  assert.equal(isPermanent(new Error('no'), [ValidationError, '23505']), false);
  assert.equal(
    isPermanent(new TransientError('later'), [TransientError]),
    false,
    'a retryable EffectivelyError stays so',
  );
});
