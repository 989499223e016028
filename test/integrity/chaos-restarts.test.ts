// The chaos kit's whole-service outages: the broker SIGKILLed and started again, the private PostgreSQL cluster
// restarted (scripts/postgres.sh; the machine's shared server is never touched). The kit and every child wait them out:
// the audit is printed, no child crashes, nothing is lost or applied twice.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runChaos } from '../../scenarios/chaos/run.ts';
import { needs } from '../support/services.ts';

test('a broker SIGKILL and a PostgreSQL restart mid-run: every child waits them out, nothing lost, nothing twice', async (t) => {
  if (!(await needs(t, 'kafka', 'postgres'))) return;
  const lines: string[] = [];
  const result = await runChaos({
    events: 1500,
    kills: 2,
    rate: 500,
    restartBroker: 1,
    restartPostgres: 1,
    timeoutMs: 150_000,
    log: (line) => lines.push(line),
  });
  const said = lines.join('\n');
  assert.deepEqual(result.restarts, { broker: 1, postgres: 1 }, said);
  assert.match(said, /^chaos: restarted broker \(SIGKILL; down \d+\.\d s\)$/m);
  assert.match(said, /^chaos: restarted postgres \(down \d+\.\d s\)$/m);
  assert.equal(result.crashes, 0, `no child crashed on an outage:\n${said}`);
  assert.ok(result.kills >= 2, said);
  assert.deepEqual([result.orders, result.lost, result.duplicated, result.pending], [1500, 0, 0, 0], said);
});
