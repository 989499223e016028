// What a kill costs, measured by the chaos kit: the seconds from the consumer's SIGKILL to the first event its
// successor applied. Checked against the database's own record: the gap in the applied rows' timestamps around the
// kill (the last e-mail before it, the first after it) must tell the same story.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ending } from '../../scenarios/chaos/ending.ts';
import { runChaos } from '../../scenarios/chaos/run.ts';
import { pgDb } from '../../src/db/pg.ts';
import { kafkaTransport } from '../../src/transport/kafka/transport.ts';
import { needs } from '../support/services.ts';

test('one consumer kill: the recovery the kit reports matches the gap in the applied rows around the kill', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const lines: string[] = [];
  const result = await runChaos({
    events: 3000,
    kills: 1,
    killRoles: ['consumer'],
    rate: 500,
    keep: true,
    log: (line) => lines.push(line),
  });
  const { schema, topic } = result.config;
  const db = pgDb({ max: 2 });
  const admin = kafkaTransport().admin();
  t.after(async () => {
    await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await admin.deleteTopics([topic]).catch(() => undefined);
    await admin.close();
    await db.close();
  });
  const said = lines.join('\n');
  assert.deepEqual([result.kills, result.lost, result.duplicated, result.pending], [1, 0, 0, 0], said);
  assert.equal(result.recoveries.length, 1, said);
  const [recovery] = result.recoveries;
  assert.equal(recovery!.role, 'consumer');

  // The e-mails' commit-side record: the last one written before the kill and the first one after it.
  const { rows } = await db.query<{ before: string; after: string }>(
    `SELECT extract(epoch FROM (SELECT max(created_at) FROM ${schema}.emails WHERE created_at < to_timestamp($1))) AS before,
            extract(epoch FROM (SELECT min(created_at) FROM ${schema}.emails WHERE created_at >= to_timestamp($1))) AS after`,
    [recovery!.killedAt / 1000],
  );
  const gap = Number(rows[0]!.after) - Number(rows[0]!.before);
  // The gap also holds the time from the last batch to the kill and lacks the first batch's own commit: close to the
  // measured recovery, not equal to it.
  assert.ok(
    gap > 0 && Math.abs(gap - recovery!.seconds) <= 0.5 + 0.25 * gap,
    `measured ${recovery!.seconds} s, gap in the applied rows ${gap.toFixed(3)} s`,
  );
  const phases = Object.values(recovery!.phases);
  assert.ok(
    phases.every((seconds) => seconds >= 0) &&
      Math.abs(phases.reduce((sum, seconds) => sum + seconds, 0) - recovery!.seconds) < 0.01,
    'the phases add up to the recovery',
  );
  const line = ending(result).lines.find((each) => each.startsWith('chaos: recovery role=consumer'));
  assert.match(line ?? '', /measured=1 recovery_p50_s=(\d+\.\d\d) recovery_p99_s=\1 /);
  t.diagnostic(`measured ${recovery!.seconds} s; gap in the applied rows ${gap.toFixed(3)} s; ${line}`);
});
