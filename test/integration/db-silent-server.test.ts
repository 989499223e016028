// A "database" that takes the connection and never answers (a proxy whose upstream is gone, another service on the
// port): the driver's connect timeout has no code, only a message. It must still become one coded line, as a refused
// connection does. The twin: a statement's own error (a syntax error from the real server) stays the caller's own.
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { test } from 'node:test';
import { pgDb } from '../../src/db/pg.ts';
import { databaseUnreachable } from '../../src/db/unreachable.ts';
import { ErrorCodes } from '../../src/errors.ts';
import { freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

test('a server that never answers: the connect timeout becomes EFF_DB_UNREACHABLE (no-answer)', async (t) => {
  const sockets = new Set<Socket>();
  const silent = createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    silent.close();
  });
  const { port } = silent.address() as { port: number };
  const db = pgDb({ connectionString: `postgres://u@127.0.0.1:${port}/app`, connectionTimeoutMs: 300 });
  t.after(() => db.close());
  const error = await db.query('SELECT 1').then(
    () => assert.fail('a silent server answered'),
    (e: unknown) => e,
  );
  assert.ok(sockets.size > 0, 'the connection was taken (so the timeout, not a refusal, ended it)');
  const coded = databaseUnreachable(error, `127.0.0.1:${port}/app`);
  assert.equal(coded?.code, ErrorCodes.EFF_DB_UNREACHABLE, `not recognised: ${String(error)}`);
  assert.equal(coded?.details?.reason, 'no-answer');
  assert.match(coded?.message ?? '', /never answered/);
});

test('twin: a statement the real server refuses is not an unreachable database', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db } = await freshSchema(t);
  const error = await db.query('SELEC 1').then(
    () => assert.fail('a syntax error passed'),
    (e: unknown) => e,
  );
  assert.equal(databaseUnreachable(error, 'here'), undefined);
});
