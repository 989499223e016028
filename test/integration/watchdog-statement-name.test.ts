// EFF_DB_NO_ANSWER names the statement that got no answer (`details.statement`, and in the message). The library's
// statements loaded from its .sql files start with a comment: the dedup claim cut by the watchdog was named `?`
// ("PostgreSQL did not answer ? within 300 ms"), so an operator could not tell a slow claim from a lost COMMIT.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pgDb } from '../../src/db/pg.ts';
import type { EffectivelyError } from '../../src/errors.ts';
import { needs } from '../support/services.ts';

for (const [shape, text] of [
  ['a line comment', "-- the library's claim\n-- on two lines\nSELECT pg_sleep(2)"],
  ['a block comment', '/* a comment */ WITH s AS (SELECT pg_sleep(2)) SELECT * FROM s'],
] as const) {
  test(`a statement that starts with ${shape} is named by its first word when its watchdog cuts it`, async (t) => {
    if (!(await needs(t, 'postgres'))) return;
    const db = pgDb({ libraryQueryTimeoutMs: 200 });
    t.after(() => db.close());
    const error = await db.query(text).then(
      () => undefined,
      (thrown: EffectivelyError) => thrown,
    );
    assert.equal(error?.code, 'EFF_DB_NO_ANSWER');
    assert.equal(error.details?.statement, text.includes('WITH') ? 'WITH' : 'SELECT');
    assert.doesNotMatch(error.message, /answer \?/);
  });
}
