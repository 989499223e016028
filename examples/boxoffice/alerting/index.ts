// The alerting service: a dead letter (a record a consumer gave up on) or a dead effect (an e-mail, a charge or a
// refund the sender gave up on) raises an alert within 10 s: an error log line, and a JSON POST to a webhook when one
// is configured (retried; its `subject` says which). One watcher per thing counted, both from the library.
import { createDeadLetterAlerts, createEffects, type DeadLetterAlert, stderrLogger } from 'effectively';
import type { BoxofficeDeps, RunningService } from '../shared/deps.ts';

export interface AlertingOptions {
  /** Where each alert is POSTed as JSON (default: none, the log line only). */
  webhookUrl?: string;
  /** How often the counts are read (default 2000 ms; at most 10000, so an alert comes within 10 s). */
  everyMs?: number;
  onAlert?: (alert: DeadLetterAlert) => void;
}

export async function startAlerting(deps: BoxofficeDeps, options: AlertingOptions = {}): Promise<RunningService> {
  const { db, schema } = deps;
  const effects = createEffects({ schema });
  const common = { db, schema, logger: deps.logger ?? stderrLogger, ...options };
  const watchers = [
    createDeadLetterAlerts({ ...common, subject: 'dead letters' }),
    createDeadLetterAlerts({ ...common, subject: 'dead effects', count: (on) => effects.count(on, 'dead') }),
  ];
  for (const watcher of watchers) await watcher.start();
  return {
    name: 'alerting',
    async close() {
      await Promise.all(watchers.map((watcher) => watcher.close()));
    },
  };
}
