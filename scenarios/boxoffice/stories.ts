// The three boxoffice scenarios: the same services and load, each with the faults of its story. `short` is the CI
// size (a few seconds); the full size is run by hand.

import { defaultShows } from '../../examples/boxoffice/system.ts';
import type { ProviderFault, ScenarioOptions } from './scenario.ts';
import type { PlannedCrash } from './supervisor.ts';

export type StoryName = 'notification-system' | 'payment-system' | 'retry-storm';
export const storyNames: StoryName[] = ['notification-system', 'payment-system', 'retry-storm'];

type Story = Omit<ScenarioOptions, 'scenario' | 'transport' | 'orders'>;

const crash = (service: PlannedCrash['service'], point: PlannedCrash['point']): PlannedCrash => ({ service, point });
// The order and inventory services both run a relay on the one outbox: `any` crashes whichever publishes first, and
// its restart publishes those rows again (a duplicate delivery).

/** Ana's hop (the notification service crashing after its commit, twice), the relay's, and the other consumers'. */
const notificationSystem = (short: boolean): Story => ({
  crashes: [
    crash('notification', 'consumer:after-db-commit'),
    crash('any', 'relay:after-publish'),
    crash('notification', 'consumer:after-db-commit'),
    crash('inventory', 'consumer:after-db-commit'),
    crash('notification', 'consumer:before-db-commit'),
    crash('search', 'consumer:after-db-commit'),
  ],
  providerFaults: [
    { at: 0.3, label: 'e-mail 503s', apply: (p) => p.email.fail({ mode: 'unavailable', forMs: short ? 800 : 3000 }) },
    { at: 0.6, label: 'e-mail timeouts', apply: (p) => p.email.fail({ mode: 'timeout', times: 3 }) },
  ],
  lostAnswers: short ? 2 : 10,
});

/**
 * Charges through 503s, timeouts after charging (settled by lookup) and slow answers; refunds after cancels, and after
 * the refusals of a small show that sells out (the order service cancels a refused order: charged, then refunded).
 */
const paymentSystem = (short: boolean): Story => ({
  shows: [...defaultShows, { showId: 'encore', capacity: short ? 8 : 100 }],
  crashes: [
    crash('payment', 'consumer:after-db-commit'),
    crash('any', 'relay:after-publish'),
    crash('payment', 'consumer:before-db-commit'),
    crash('payment', 'consumer:after-db-commit'),
  ],
  providerFaults: [
    {
      at: 0.2,
      label: 'payment 503s',
      apply: (p) => p.payment.fail({ mode: 'unavailable', forMs: short ? 800 : 3000 }),
    },
    { at: 0.45, label: 'charged, no answer', apply: (p) => p.payment.fail({ mode: 'timeout', times: short ? 3 : 10 }) },
    { at: 0.7, label: 'slow answers', apply: (p) => p.payment.fail({ mode: 'slow', delayMs: 300, forMs: 2000 }) },
  ],
  cancelEvery: 5,
});

/** The e-mail provider down for a while under load: the breaker opens, the backlog waits, then drains at the limit. */
const retryStorm = (short: boolean): Story => {
  const outage: ProviderFault = {
    at: 0.1,
    label: 'e-mail provider down',
    apply: (p) => p.email.fail({ mode: 'unavailable', forMs: short ? 2000 : 10_000 }),
  };
  return { crashes: [crash('notification', 'consumer:after-db-commit')], providerFaults: [outage], emailRate: 50 };
};

export const stories: Record<StoryName, (short: boolean) => Story> = {
  'notification-system': notificationSystem,
  'payment-system': paymentSystem,
  'retry-storm': retryStorm,
};
