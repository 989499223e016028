// A dead-letter store that goes from empty to non-empty, or keeps growing, is announced: callback, webhook (retried).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { migrate } from '../../src/db/migrate.ts';
import { pgliteDb } from '../../src/db/pglite.ts';
import { createDeadLetterAlerts, type DeadLetterAlert } from '../../src/deadletter/alerts.ts';
import { deadLetterStore } from '../../src/deadletter/store.ts';
import { PermanentError } from '../../src/errors.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import { eventually } from '../support/fixtures.ts';

test('alerts fire within seconds of the first dead letter and as the store grows; the webhook is retried', async (t) => {
  const db = await pgliteDb();
  t.after(() => db.close());
  const schema = 'dl_alerts';
  await migrate(db, { schema });
  const received: DeadLetterAlert[] = [];
  let requests = 0;
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      requests += 1;
      // The first delivery is refused: the alert must be retried, not lost.
      response.statusCode = requests === 1 ? 503 : 200;
      if (requests > 1) received.push(JSON.parse(body) as DeadLetterAlert);
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const seen: DeadLetterAlert[] = [];
  const alerts = createDeadLetterAlerts({
    db,
    schema,
    everyMs: 200,
    webhookUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/alerts`,
    onAlert: (alert) => seen.push(alert),
    logger: silentLogger,
  });
  t.after(() => alerts.close());
  await alerts.start();

  const store = deadLetterStore({ schema });
  // Letters kept in one transaction: a poll sees all of them or none (two transactions may fall across a poll).
  const keep = (...offsets: string[]) =>
    db.transaction(async (tx) => {
      for (const offset of offsets) {
        await store.keep(tx, {
          consumer: 'notifications',
          record: {
            topic: 'orders',
            partition: 0,
            offset,
            key: null,
            value: Buffer.from('{}'),
            headers: {},
            timestamp: 0,
          },
          eventId: null,
          error: new PermanentError('bad order'),
          attempts: 1,
          firstFailedAt: new Date(),
        });
      }
    });
  const started = Date.now();
  await keep('1');
  await eventually(async () => seen.length === 1, 10_000, 'the first alert');
  assert.ok(Date.now() - started < 10_000);
  assert.deepEqual([seen[0]!.kind, seen[0]!.dead, seen[0]!.added], ['non-empty', 1, 1]);
  await eventually(async () => received.length === 1, 10_000, 'the webhook, after one refusal');
  assert.equal(received[0]!.kind, 'non-empty');

  await keep('2', '3');
  await eventually(async () => seen.length === 2, 10_000, 'the growing alert');
  assert.deepEqual([seen[1]!.kind, seen[1]!.dead, seen[1]!.added], ['growing', 3, 2]);
  assert.equal(alerts.dead, 3);
});
