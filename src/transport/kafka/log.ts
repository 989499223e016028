import type { Logger } from '../../observability/logger.ts';

/** The levels the Kafka client may log at; it drops anything below the one chosen. */
export type KafkaClientLogLevel = 'error' | 'warn' | 'info' | 'debug';

/** What the client's KafkaJS-style API calls (`kafkaJS: { logger }`); librdkafka's own `log` events come here too. */
export interface ClientLogger {
  debug(message: string, extra?: object): void;
  info(message: string, extra?: object): void;
  warn(message: string, extra?: object): void;
  error(message: string, extra?: object): void;
  namespace(): ClientLogger;
  setLogLevel(level: number): void;
}

export interface ClientLogOptions {
  /** The lowest level passed on (the client is told the same, so librdkafka does not even produce the rest). */
  level: KafkaClientLogLevel;
  /** At most one line per distinct message per this many ms; the next line after it says how many were suppressed. */
  repeatIntervalMs: number;
  /** Clock in ms (default `performance.now()`, monotonic). */
  now?: () => number;
}

/**
 * The client's `KafkaJS.logLevel` values, written out so that importing this file does not load the client (a test
 * compares them with the client's own).
 */
export const clientLogLevels: Record<KafkaClientLogLevel, number> = { error: 1, warn: 2, info: 3, debug: 4 };

/** Distinct messages remembered at most; the oldest is forgotten first (a forgotten one is logged again at once). */
const maxRemembered = 1000;

/**
 * The same failure text differs only in timings (`after 0ms in state CONNECT`) and librdkafka's own suppression
 * counts; such lines are one message.
 */
function messageKey(level: string, message: string): string {
  return `${level} ${message.replace(/,? ?\d+ identical error\(s\) suppressed/g, '').replace(/\b\d+ms\b/g, '#ms')}`;
}

/**
 * The Kafka client's own log lines (librdkafka's `log` events and the binding's messages) into the library's Logger:
 * structured (`source: 'kafka-client'`, the client instance, librdkafka's facility) and rate-limited, so an outage
 * that repeats one failure does not flood the log. Without it the client prints raw objects on stderr.
 */
export function clientLogger(logger: Logger, options: ClientLogOptions): ClientLogger {
  const now = options.now ?? (() => performance.now());
  const seen = new Map<string, { loggedAt: number; suppressed: number }>();
  let threshold = clientLogLevels[options.level];

  const write = (level: KafkaClientLogLevel, message: string, extra?: object) => {
    if (clientLogLevels[level] > threshold) return;
    const key = messageKey(level, message);
    const at = now();
    const last = seen.get(key);
    if (last && at - last.loggedAt < options.repeatIntervalMs) {
      last.suppressed += 1;
      return;
    }
    seen.delete(key);
    seen.set(key, { loggedAt: at, suppressed: 0 });
    if (seen.size > maxRemembered) seen.delete(seen.keys().next().value as string);
    const { name, fac } = (extra ?? {}) as { name?: unknown; fac?: unknown };
    try {
      logger[level](message, {
        source: 'kafka-client',
        ...(name === undefined || name === '' ? {} : { client: name }),
        ...(fac === undefined ? {} : { facility: fac }),
        ...(last && last.suppressed > 0 ? { suppressed: last.suppressed } : {}),
      });
    } catch {
      // Called from the client's event callbacks, where a throw is an uncaught exception: a failing logger must not
      // take the process down.
    }
  };

  const client: ClientLogger = {
    debug: (message, extra) => write('debug', message, extra),
    info: (message, extra) => write('info', message, extra),
    warn: (message, extra) => write('warn', message, extra),
    error: (message, extra) => write('error', message, extra),
    namespace: () => client,
    // The client sets the level it derived from the transport's `clientLogLevel` (or from a `log_level`/`debug`
    // property in `rdkafka`, which win, as in the client itself).
    setLogLevel: (level) => {
      threshold = level;
    },
  };
  return client;
}
