// The Kafka client's own log lines (librdkafka's and the binding's) go through the library's Logger, rate-limited,
// and nothing raw reaches stderr. Run in a child process: only there can the test see what the client prints.
// Needs no broker: the clients are aimed at a closed port (127.0.0.1:1), as during an outage.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

type Line = { level: string; message: string; fields?: Record<string, unknown> };

test('the Kafka client logs through the Logger, rate-limited, and nothing raw reaches stderr', () => {
  const child = spawnSync(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('./kafka-client-log.child.ts', import.meta.url))],
    { encoding: 'utf8', timeout: 120_000, env: { ...process.env, KAFKAJS_LOG_LEVEL: '' } },
  );
  assert.equal(child.status, 0, `child failed: ${child.stderr}`);
  const { limited, naive } = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as { limited: Line[]; naive: Line[] };

  // stderr: only the default Logger's JSON lines (the transport without a logger), no raw client objects.
  const stderrLines = child.stderr.split('\n').filter((line) => line.trim() !== '');
  assert.ok(stderrLines.length > 0, 'the transport without a logger logged through the default one (stderr)');
  for (const line of stderrLines) {
    let parsed: { source?: unknown; level?: unknown; msg?: unknown };
    try {
      parsed = JSON.parse(line);
    } catch {
      assert.fail(`raw output on stderr: ${line}`);
    }
    assert.equal(parsed.source, 'kafka-client', line);
    assert.equal(typeof parsed.msg, 'string', line);
  }

  // The naive twin proves the test sees the flood: the same message from several clients.
  const naiveMessages = naive.map((line) => line.message);
  assert.ok(
    new Set(naiveMessages).size < naiveMessages.length,
    `the unlimited logger saw a repeat: ${naiveMessages.join(' | ')}`,
  );
  assert.ok(
    naive.some((line) => line.message.includes('Connect to ipv4#127.0.0.1:1 failed')),
    'the client reported the refused connection',
  );

  // Through the Logger, structured, each distinct message once.
  assert.ok(limited.length > 0, 'the capturing Logger received the client lines');
  for (const line of limited) {
    assert.equal(line.fields?.source, 'kafka-client', JSON.stringify(line));
    assert.ok(['error', 'warn'].includes(line.level), `default level warn: ${JSON.stringify(line)}`);
  }
  const limitedMessages = limited.map((line) => line.message);
  assert.equal(new Set(limitedMessages).size, limitedMessages.length, `repeats: ${limitedMessages.join(' | ')}`);
  assert.ok(limited.length < naive.length);
});
