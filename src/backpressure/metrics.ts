import type { Queryable } from '../db/port.ts';
import type { Sender } from '../effects/sender.ts';
import { countRefused } from '../outbox/refused.ts';
import type { Admin, Transport } from '../transport/port.ts';
import type { CircuitState, CircuitStateChange } from './circuit-breaker.ts';
import { consumerLag } from './lag.ts';

/** `backpressure:metrics` — one snapshot, flat and snake_case, ready for any metrics library or a JSON endpoint. */
export interface BackpressureSnapshot {
  /** The sender's breaker now (`none`: it has none). */
  breaker_state: CircuitState | 'none';
  /** Times the breaker opened since these metrics were created (a counter). */
  breaker_opened_total: number;
  /** Provider calls started (lookups not included), since the sender started. */
  sender_calls_total: number;
  sender_done_total: number;
  /** Failures put back for a later attempt. */
  sender_retried_total: number;
  /** Effects given up on: alert on its growth (see `createDeadLetterAlerts` with `count`). */
  sender_dead_total: number;
  sender_timeouts_total: number;
  sender_in_flight: number;
  /** True while no call may start (breaker open or a Retry-After hold). */
  sender_paused: boolean;
  /** True while any of the watched consumers is paused. */
  consumer_paused: boolean;
  /** How many of the watched consumers are paused. */
  consumers_paused: number;
  /** Sum of the group's lag over its topics (`consumerLag`); null when no `lag` source was given. */
  consumer_lag: number | null;
  /**
   * Outbox rows set aside now because the transport refused them (`countRefused`), read from the database: seen even
   * when a relay died before its `onRefused`. Null when no `refused` source was given.
   */
  outbox_refused: number | null;
}

export interface BackpressureMetricsOptions {
  sender: Sender;
  /** The consumers that feed the sender's provider (default none: `consumer_paused` stays false). */
  consumers?: readonly { readonly paused: boolean }[];
  /** Where `consumer_lag` comes from (default none: null). `source`: a transport, or an open `Admin` to poll with. */
  lag?: { source: Transport | Admin; group: string; topics: readonly string[] };
  /** Where `outbox_refused` is counted (default none: null): the database and schema of the outbox. */
  refused?: { db: Queryable; schema?: string };
  /** Called on every state change of the sender's breaker, after the counter moved (default: none). */
  onBreakerChange?: (change: CircuitStateChange) => void;
}

export interface BackpressureMetrics {
  /** A fresh snapshot (reads the lag from the transport when `lag` was given). */
  metrics(): Promise<BackpressureSnapshot>;
  /** Stops listening to the breaker. */
  close(): void;
}

/**
 * The observable side of backpressure: the breaker's state and openings, the sender's counters, whether the consumers
 * feeding it are paused, and their lag, as one snapshot. Subscribes to the sender's breaker for `breaker_opened_total`
 * (create it before the sender starts to count every opening).
 */
export function backpressureMetrics(options: BackpressureMetricsOptions): BackpressureMetrics {
  const { sender } = options;
  const consumers = options.consumers ?? [];
  let opened = 0;
  const unsubscribe = sender.breaker?.onStateChange((change) => {
    if (change.to === 'open') opened += 1;
    options.onBreakerChange?.(change);
  });
  return {
    async metrics() {
      const lag = options.lag
        ? await consumerLag(options.lag.source, options.lag.group, options.lag.topics)
        : undefined;
      const refused = options.refused
        ? (
            await countRefused(options.refused.db, {
              ...(options.refused.schema ? { schema: options.refused.schema } : {}),
            })
          ).refused
        : null;
      const stats = sender.stats;
      const paused = consumers.filter((consumer) => consumer.paused).length;
      return {
        breaker_state: sender.breaker?.state ?? 'none',
        breaker_opened_total: opened,
        sender_calls_total: stats.calls,
        sender_done_total: stats.done,
        sender_retried_total: stats.retried,
        sender_dead_total: stats.dead,
        sender_timeouts_total: stats.timeouts,
        sender_in_flight: stats.inFlight,
        sender_paused: sender.paused,
        consumer_paused: paused > 0,
        consumers_paused: paused,
        consumer_lag: lag ? lag.total : null,
        outbox_refused: refused,
      };
    },
    close() {
      unsubscribe?.();
    },
  };
}
