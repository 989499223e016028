// A PostgreSQL restart is nobody's record failure: every way node-postgres reports a lost server is recognised, so the
// consumer waits it out instead of counting an attempt against the record it was applying.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isConnectionLost } from '../../src/db/sqlstate.ts';

test('isConnectionLost: codes, SQLSTATEs and node-postgres messages without a code', () => {
  const lost = [
    { code: '57P01' },
    { code: '08006' },
    { code: 'ECONNRESET' },
    { code: 'ECONNREFUSED' },
    new Error('Connection terminated unexpectedly'),
    new Error('Client has encountered a connection error and is not queryable'),
  ];
  for (const error of lost) assert.equal(isConnectionLost(error), true, JSON.stringify(String(error)));
  const notLost = [
    { code: '23505' },
    { code: '40001' },
    new Error('relation "x" does not exist'),
    new Error('this value is not queryable by design, says the handler'),
    undefined,
  ];
  for (const error of notLost) assert.equal(isConnectionLost(error), false, String(error));
});
