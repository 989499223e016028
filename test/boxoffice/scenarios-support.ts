// The boxoffice scenarios' short versions as tests: each must end with nothing lost or doubled, every planned crash
// having happened, the poison order dead-lettered and alerted within 10 s.
import assert from 'node:assert/strict';
import type { TransportName } from '../../scenarios/boxoffice/environment.ts';
import { runScenario, type ScenarioOptions, type ScenarioResult } from '../../scenarios/boxoffice/scenario.ts';
import { type StoryName, stories } from '../../scenarios/boxoffice/stories.ts';

export function runShort(
  name: StoryName,
  transport: TransportName,
  extra: Partial<ScenarioOptions> = {},
): Promise<ScenarioResult> {
  return runScenario({ ...stories[name](true), scenario: name, transport, orders: 40, report: false, ...extra });
}

export function assertClean(result: ScenarioResult, name: StoryName): void {
  assert.match(
    result.line,
    new RegExp(`^${name}: orders=40 emails=\\d+ charges=40 refunds=\\d+ seats_ok=yes duplicates=0 lost=0$`),
  );
  assert.deepEqual(result.missed, [], 'every planned crash happened');
  // its small show sells out: refused orders, each cancelled (lost=0 counts one that is not) and refunded
  if (name === 'payment-system') assert.ok(result.audit.refused > 0, 'some orders refused');
  assert.ok(result.crashes.length > 0);
  assert.ok(result.audit.poisoned > 0, 'the poison order is a dead letter');
  assert.ok(result.alertAfterS !== undefined && result.alertAfterS <= 10, `alert after ${result.alertAfterS} s`);
  assert.ok(result.maxCallsPerSecond <= result.emailRate * 1.25, `e-mail calls ${result.maxCallsPerSecond}/s`);
  assert.equal(result.ok, true);
}
