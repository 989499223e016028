// `effectively relay` says it runs, publishes, and says how much it published when stopped. Real broker and PostgreSQL.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { defaultDatabaseUrl } from '../../src/db/pg.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { createOutbox } from '../../src/outbox/outbox.ts';
import { cli } from '../support/cli.ts';
import { eventually, freshSchema, freshTopic } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

test('effectively relay: a running line, the outbox published, the total on SIGTERM, exit 0', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const { transport, topic } = await freshTopic(t, 1);
  await db.transaction((tx) =>
    createOutbox({ schema }).enqueue(
      tx,
      [1, 2, 3].map((n) => createEvent({ topic, type: 'x', source: '/t', key: `k${n}`, data: { n } })),
    ),
  );
  const child = spawn(process.execPath, [cli, 'relay', '--schema', schema], {
    env: { ...process.env, DATABASE_URL: defaultDatabaseUrl() },
  });
  let out = '';
  child.stdout.on('data', (chunk) => {
    out += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  t.after(() => child.kill('SIGKILL'));
  await eventually(async () => out.includes(`relay: running on schema ${schema}`), 30_000, 'the running line');
  const admin = transport.admin();
  t.after(() => admin.close());
  await eventually(async () => (await admin.endOffsets(topic))[0]?.offset === '3', 30_000, 'three published');
  child.kill('SIGTERM');
  assert.equal(await exited, 0);
  assert.match(out, /relay: stopped; published 3 in all/);
});
