import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { EffectivelyError, ErrorCodes, PermanentError, TransientError } from '../../src/errors.ts';

test('every error code is documented in docs/errors.md', () => {
  const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  const missing = Object.values(ErrorCodes).filter((code) => !doc.includes(`\`${code}\``));
  assert.deepEqual(missing, []);
});

test('handler errors carry their retry class and code', () => {
  const permanent = new PermanentError('bad order', { cause: new Error('inner') });
  const transient = new TransientError('provider down');
  assert.ok(permanent instanceof EffectivelyError);
  assert.equal(permanent.code, 'EFF_HANDLER_FAILED');
  assert.equal(permanent.retryable, false);
  assert.equal((permanent.cause as Error).message, 'inner');
  assert.equal(transient.retryable, true);
});
