// Issue 11 item 8 (and the CLI half of item 7): `dlq --transport` other than kafka|postgres is refused (it silently
// meant Kafka); a redrive stopped by SIGINT exits non-zero; `discard` prints how many it discarded, not how many it
// listed; `list`/`show` escape control characters (a payload's terminal escape sequences reached the terminal);
// `sender --kinds ""` is refused and the URL's credentials are not printed; `pgDb().listen` connects with the pool's
// own settings (it copied only the connection string).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { dlqCommand } from '../../src/cli/dlq.ts';
import { senderCommand } from '../../src/cli/sender.ts';
import { pgDb } from '../../src/db/pg.ts';
import type { Db } from '../../src/db/port.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { PermanentError } from '../../src/errors.ts';
import { eventually, freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const terminalEscape = '\u001b]0;owned\u0007\u001b[2J\u001b[31m';

async function keepLetters(db: Db, schema: string, count: number): Promise<string[]> {
  const store = deadLetterStore({ schema });
  for (let n = 1; n <= count; n++) {
    await store.keep(db, {
      consumer: 'billing',
      record: {
        topic: 'orders',
        partition: 0,
        offset: String(n),
        key: Buffer.from(`k${terminalEscape}`),
        value: Buffer.from(`{"note":"${terminalEscape}"}`),
        headers: {},
        timestamp: 0,
      },
      eventId: null,
      error: new PermanentError(`refused ${terminalEscape}`),
      attempts: 1,
      firstFailedAt: new Date(),
    });
  }
  return (await store.list(db)).map((letter) => letter.id);
}

/** Runs `work` with console.log/error captured. */
async function captured<T>(work: () => Promise<T>): Promise<{ result: T; out: string }> {
  const { log, error } = console;
  let out = '';
  console.log = (...args: unknown[]) => {
    out += `${args.join(' ')}\n`;
  };
  console.error = console.log;
  try {
    return { result: await work(), out };
  } finally {
    console.log = log;
    console.error = error;
  }
}

const dlqArgs = (schema: string) => ({ schema, json: false, dryRun: false });

test('cli slips: dlq --transport other than kafka|postgres is refused', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  await keepLetters(db, schema, 1);
  const { result, out } = await captured(() => dlqCommand(db, 'redrive', { ...dlqArgs(schema), transport: 'pg' }));
  assert.equal(result, 2);
  assert.match(out, /--transport/);
  assert.equal((await deadLetterStore({ schema }).list(db)).length, 1, 'nothing redriven');
});

test('cli slips: a redrive stopped by SIGINT exits non-zero', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  await keepLetters(db, schema, 2);
  const { result, out } = await captured(async () => {
    const running = dlqCommand(db, 'redrive', { ...dlqArgs(schema), transport: 'postgres', all: true });
    process.emit('SIGINT'); // the command's own handler is installed before its first await
    return running;
  });
  assert.equal(result, 130, out);
  assert.match(out, /interrupted/);
});

test('cli slips: discard prints how many it discarded, not how many it listed', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const ids = await keepLetters(db, schema, 2);
  await deadLetterStore({ schema }).discard(db, [ids[0]!]);
  // listing already-discarded letters: none of them can be discarded again
  const args = { ...dlqArgs(schema), ids: ids.join(','), status: 'discarded' };
  const { result, out } = await captured(() => dlqCommand(db, 'discard', args));
  assert.equal(result, 0);
  assert.match(out, /dlq: discarded 0\b/);
  // naive twin: a dead one is discarded and counted
  const again = await captured(() => dlqCommand(db, 'discard', { ...dlqArgs(schema), ids: ids[1]! }));
  assert.match(again.out, /dlq: discarded 1\b/);
});

test('cli slips: dlq list and show escape control characters of payloads, keys and reasons', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  await keepLetters(db, schema, 1);
  for (const action of ['list', 'show']) {
    const { out } = await captured(() => dlqCommand(db, action, dlqArgs(schema)));
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what must not get through
    assert.doesNotMatch(out, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/, `${action}: ${JSON.stringify(out)}`);
    assert.match(out, /\\u001b\[31m|\\x1b\[31m/, `${action} shows the escape visibly`);
  }
});

test('cli slips: sender --kinds "" is refused; the URL credentials are not printed', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const url = 'http://ops:s3cret-T0KEN@127.0.0.1:9/hooks';
  const refused = await captured(() => senderCommand(db, { schema, url, kinds: '', lookup: false }));
  assert.equal(refused.result, 2);
  assert.match(refused.out, /--kinds/);
  assert.equal((await captured(() => senderCommand(db, { schema, url, kinds: ' , ', lookup: false }))).result, 2);
  // naive twin: with a kind it starts (stopped by SIGTERM), and prints the URL without the token
  const { result, out } = await captured(async () => {
    const before = process.listenerCount('SIGTERM');
    const running = senderCommand(db, { schema, url, kinds: 'webhook', lookup: false });
    await eventually(async () => process.listenerCount('SIGTERM') > before, 10_000, 'the sender started');
    process.emit('SIGTERM');
    return running;
  });
  assert.equal(result, 0);
  assert.match(out, /calling http:\/\/\*\*\*@127\.0\.0\.1:9\/hooks for webhook/);
  assert.doesNotMatch(out, /s3cret/);
});

test('cli slips: pgDb().listen uses the settings of a pool built from fields', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  // a pool on database `test` built from fields: a listen that falls back to the default URL listens on `postgres`
  const pool = new pg.Pool({ host: '127.0.0.1', port: 5432, user: 'postgres', database: 'test', max: 2 });
  const db = pgDb(pool);
  t.after(() => pool.end());
  let notified = 0;
  const stop = await db.listen!('effectively_listen_check', () => {
    notified += 1;
  });
  t.after(stop);
  await eventually(
    async () => {
      await db.query('NOTIFY effectively_listen_check');
      return notified > 0;
    },
    10_000,
    'a notification',
  );
});

test('cli slips: redrive with no filter redrives nothing unless told --all', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  await keepLetters(db, schema, 2);
  const refused = await captured(() => dlqCommand(db, 'redrive', { ...dlqArgs(schema), transport: 'postgres' }));
  assert.equal(refused.result, 2);
  assert.match(refused.out, /every group's dead letters.*--all/);
  assert.equal((await deadLetterStore({ schema }).list(db, { status: 'dead' })).length, 2, 'nothing redriven');
  const all = await captured(() => dlqCommand(db, 'redrive', { ...dlqArgs(schema), transport: 'postgres', all: true }));
  assert.equal(all.result, 0, all.out);
  assert.match(all.out, /dlq: redriven 2/);
  assert.equal((await deadLetterStore({ schema }).list(db, { status: 'dead' })).length, 0);
});
