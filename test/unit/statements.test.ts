// A query text cut into statements as PostgreSQL's lexer cuts it: what the handler's view of a transaction looks at
// for a BEGIN, COMMIT or ROLLBACK hidden among several statements.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { statementsOf } from '../../src/db/statements.ts';

test('cut at the semicolons outside strings, names, comments and dollar-quoted bodies', () => {
  const cases: [string, string[]][] = [
    ["INSERT INTO t VALUES ('a;b'); COMMIT", ["INSERT INTO t VALUES ('a;b')", 'COMMIT']],
    ["select 'it''s; fine'", ["select 'it''s; fine'"]],
    ["select E'\\'; commit'", ["select E'\\'; commit'"]],
    ["select e'\\\\'; commit", ["select e'\\\\'", 'commit']],
    ['select "a;b" from t', ['select "a;b" from t']],
    ['SELECT $$a;b$$; select $q$ ; $q$', ['SELECT $$a;b$$', 'select $q$ ; $q$']],
    ['select $1; rollback', ['select $1', 'rollback']],
    ['select a$b; end', ['select a$b', 'end']],
    ['DO $x$ BEGIN PERFORM 1; END $x$', ['DO $x$ BEGIN PERFORM 1; END $x$']],
  ];
  for (const [text, expected] of cases) assert.deepEqual(statementsOf(text), expected, text);
});

test('comments become a space, statements are trimmed, empty ones left out', () => {
  assert.deepEqual(statementsOf('-- a note\nCOMMIT'), ['COMMIT']);
  assert.deepEqual(statementsOf('COMMIT /* c; */'), ['COMMIT']);
  assert.deepEqual(statementsOf('/* a /* nested; */ still; */ commit;;  ;'), ['commit']);
  assert.deepEqual(statementsOf('select 1 -- ; end'), ['select 1']);
  assert.deepEqual(statementsOf('  '), []);
  assert.deepEqual(statementsOf('select 1;\n-- trailing'), ['select 1']);
});

test('an unterminated string, comment or body runs to the end (one statement, as the server would refuse it)', () => {
  assert.deepEqual(statementsOf("select 'open; commit"), ["select 'open; commit"]);
  assert.deepEqual(statementsOf('select $$open; commit'), ['select $$open; commit']);
  assert.deepEqual(statementsOf('select /* open; commit'), ['select']);
});

const tag = 'q'.repeat(70);

test('the lexer reads what the server reads: \\r ends a line comment, E strings continue, tags of any length', () => {
  const cases: [string, string[]][] = [
    ['select 1 --x\r; commit', ['select 1', 'commit']],
    ["select E'x'\n'\\''; commit; select ''", ["select E'x'\n'\\''", 'commit', "select ''"]],
    ["select E'x' \r\n -- note\n'\\'' ; commit", ["select E'x' \r\n -- note\n'\\''", 'commit']],
    [`select $${tag}$ ' $${tag}$; commit; select ''`, [`select $${tag}$ ' $${tag}$`, 'commit', "select ''"]],
    ["select 1E'\\''; commit; select ''", ["select 1E'\\''", 'commit', "select ''"]],
    ["select xE'\\'; commit", ["select xE'\\'", 'commit']],
    ["select 1$q$'$q$; commit; select ''", ["select 1$q$'$q$", 'commit', "select ''"]],
    ["select $1$q$'$q$; commit; select ''", ["select $1$q$'$q$", 'commit', "select ''"]],
  ];
  for (const [text, expected] of cases) assert.deepEqual(statementsOf(text), expected, JSON.stringify(text));
});

test('backslashEscapes: every string read as the server reads it with standard_conforming_strings off', () => {
  const text = "select '\\''; commit; select ''";
  assert.deepEqual(statementsOf(text), [text], 'standard: one string');
  assert.deepEqual(statementsOf(text, { backslashEscapes: true }), ["select '\\''", 'commit', "select ''"]);
});

test('bodies and strings holding semicolons and transaction words stay one statement', () => {
  for (const text of [
    `DO $${tag}$ BEGIN PERFORM 1; COMMIT; END $${tag}$`,
    "CREATE FUNCTION f() RETURNS text LANGUAGE sql AS $fn$ SELECT ';commit'; SELECT 'x' $fn$",
    "select ';commit', E'\\';commit', E'a'\n' ;commit', U&'d\\0061;commit'",
    'select "x;commit"""',
  ]) {
    assert.deepEqual(statementsOf(text), [text], JSON.stringify(text));
  }
});

test('a long run of whitespace after an E string is read in linear time', () => {
  for (const tail of ['a', "'"]) {
    const text = `select E'x'\n${' \n'.repeat(50_000)}${tail}`;
    const started = performance.now();
    assert.equal(statementsOf(text).length, 1);
    assert.ok(performance.now() - started < 500, `${performance.now() - started} ms`);
  }
});
