// The chaos kit's whole-service outages: the broker SIGKILLed and started again, the private PostgreSQL cluster
// restarted (scripts/postgres.sh; the machine's shared server is never touched). The kit and every child wait them out:
// the audit is printed, no child crashes, nothing is lost or applied twice. The broker it kills is a private one of
// this test (its own home and ports), never the shared broker on 9092; the PostgreSQL cluster has its own home too.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runChaos } from '../../scenarios/chaos/run.ts';
import { freePorts, kafkaScript } from '../support/kafka-script.ts';
import { needs } from '../support/services.ts';

const postgresSh = fileURLToPath(new URL('../../scripts/postgres.sh', import.meta.url));

test('a broker SIGKILL and a PostgreSQL restart mid-run: every child waits them out, nothing lost, nothing twice', async (t) => {
  if (!(await needs(t, 'postgres'))) return;
  const port = await freePorts(2);
  const kafka = kafkaScript(t, { KAFKA_PORT: String(port), KAFKA_CONTROLLER_PORT: String(port + 1) });
  if (!kafka) return;
  kafka.run(['start']);
  const pgHome = mkdtempSync(join(tmpdir(), 'effectively-pg-'));
  t.after(() => {
    spawnSync('bash', [postgresSh, 'stop'], { env: { ...process.env, PG_HOME_DIR: pgHome } });
    rmSync(pgHome, { recursive: true, force: true });
  });
  const lines: string[] = [];
  const result = await runChaos({
    events: 1500,
    kills: 2,
    rate: 500,
    restartBroker: 1,
    restartPostgres: 1,
    timeoutMs: 150_000,
    brokers: { nodes: 1, env: kafka.env },
    postgresHome: pgHome,
    log: (line) => lines.push(line),
  });
  const said = lines.join('\n');
  assert.deepEqual(result.restarts, { broker: 1, postgres: 1 }, said);
  assert.match(said, /^chaos: restarted broker \(SIGKILL; down \d+\.\d s\)$/m);
  assert.match(said, /^chaos: restarted postgres \(down \d+\.\d s\)$/m);
  assert.equal(result.crashes, 0, `no child crashed on an outage:\n${said}`);
  assert.ok(result.kills >= 2, said);
  assert.deepEqual([result.orders, result.lost, result.duplicated, result.pending], [1500, 0, 0, 0], said);
  // The run stopped the private cluster it started: its port is free for the next run.
  const status = spawnSync('bash', [postgresSh, 'status'], { env: { ...process.env, PG_HOME_DIR: pgHome } });
  assert.equal(status.status, 1, 'the private cluster was stopped at the end of the run');
});
