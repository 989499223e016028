// `effectively dlq` against the real PostgreSQL (redrive through the postgres transport: no broker needed).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { encodeEvent } from '../../src/envelope/cloudevents.ts';
import { createEvent } from '../../src/envelope/event.ts';
import { EffectivelyError } from '../../src/errors.ts';
import { postgresTransport } from '../../src/transport/postgres/transport.ts';
import { runCli } from '../support/cli.ts';
import { freshSchema } from '../support/fixtures.ts';
import { needs } from '../support/services.ts';

const run = runCli;

test('dlq list, redrive --dry-run, redrive and discard from the command line', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const { db, schema } = await freshSchema(t);
  const transport = postgresTransport({ db, schema });
  await transport.admin().createTopics([{ topic: 'orders', partitions: 1 }]);
  const event = createEvent({ topic: 'orders', type: 'x', source: '/t', key: 'k', data: { n: 1 } });
  const encoded = encodeEvent(event);
  const headers: Record<string, Buffer> = {};
  for (const [name, value] of Object.entries(encoded.headers)) headers[name] = Buffer.from(value);
  const store = deadLetterStore({ schema });
  await db.transaction((tx) =>
    store.keep(tx, {
      consumer: 'notifications',
      record: {
        topic: 'orders',
        partition: 0,
        offset: '7',
        key: Buffer.from('k'),
        value: encoded.value,
        headers,
        timestamp: 0,
      },
      eventId: event.id,
      error: new EffectivelyError('EFF_HANDLER_FAILED', 'provider rejected the address'),
      attempts: 3,
      firstFailedAt: new Date(),
    }),
  );

  const listed = await run('dlq', 'list', '--schema', schema, '--json');
  assert.equal(listed.code, 0);
  const [letter] = JSON.parse(listed.stdout) as { id: string; eventId: string; code: string; attempts: number }[];
  assert.deepEqual([letter?.eventId, letter?.code, letter?.attempts], [event.id, 'EFF_HANDLER_FAILED', 3]);

  const dry = await run('dlq', 'redrive', '--schema', schema, '--transport', 'postgres', '--dry-run', '--json');
  assert.equal(JSON.parse(dry.stdout).length, 1);
  assert.equal((await transport.admin().endOffsets('orders'))[0]?.offset, '0', 'a dry run sends nothing');

  const unfiltered = await run('dlq', 'redrive', '--schema', schema, '--transport', 'postgres', '--json');
  assert.equal(unfiltered.code, 2, 'no filter, no --all: refused');
  assert.equal((await transport.admin().endOffsets('orders'))[0]?.offset, '0', 'a refused redrive sends nothing');
  const redriven = await run('dlq', 'redrive', '--schema', schema, '--transport', 'postgres', '--all', '--json');
  assert.equal(JSON.parse(redriven.stdout).length, 1);
  assert.equal((await transport.admin().endOffsets('orders'))[0]?.offset, '1');
  const [logged] = (await db.query<{ headers: Record<string, string> }>(`SELECT headers FROM ${schema}.log_records`))
    .rows;
  assert.equal(Buffer.from(logged!.headers.ce_id!, 'base64').toString(), event.id, 'redriven with the same event id');
  assert.deepEqual(await store.list(db), [], 'no longer dead');

  assert.equal((await run('dlq', 'discard', '--schema', schema)).code, 2, 'discard wants explicit ids');
  assert.equal((await run('dlq', 'bogus', '--schema', schema)).code, 2);
});
