import { EffectivelyError, ErrorCodes } from '../errors.ts';
import type { SendOutcome } from '../transport/port.ts';

/**
 * What a failed `send` means for the relay, read from the error codes the transports' errors carry (never their
 * message text): a refusal no retry can fix, a producer that must be replaced, a send too large for the client as a
 * whole (its local queue full: smaller sends pass), or anything else (retried as it is).
 */
export type SendFailure = 'refused' | 'fatal' | 'too-much' | 'transient';

// librdkafka's codes (the Kafka client's `error.code`, numbers): the broker or the client refuses these records for
// good. They repeat on every retry until someone changes the topic or the record.
const kafkaRefusals = new Map<number, string>([
  [2, 'ERR_INVALID_MSG'],
  [3, 'ERR_UNKNOWN_TOPIC_OR_PART'],
  [10, 'ERR_MSG_SIZE_TOO_LARGE'],
  [17, 'ERR_TOPIC_EXCEPTION'],
  [18, 'ERR_RECORD_LIST_TOO_LARGE'],
  [29, 'ERR_TOPIC_AUTHORIZATION_FAILED'],
  [32, 'ERR_INVALID_TIMESTAMP'],
  [43, 'ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT'],
  [44, 'ERR_POLICY_VIOLATION'],
  [87, 'ERR_INVALID_RECORD'],
  [-186, 'ERR__INVALID_ARG'],
  [-188, 'ERR__UNKNOWN_TOPIC'],
]);

// After these the producer instance is unusable: every later send fails the same way until it is replaced.
const kafkaFatal = new Map<number, string>([
  [-150, 'ERR__FATAL'],
  [-144, 'ERR__FENCED'],
  [47, 'ERR_INVALID_PRODUCER_EPOCH'],
  [90, 'ERR_PRODUCER_FENCED'],
]);

// The client's local limits: the send as a whole is too much for it; halves pass.
const kafkaTooMuch = new Map<number, string>([[-184, 'ERR__QUEUE_FULL']]);

// SQLSTATE classes the embedded log (PostgreSQL/PGlite) answers for data it will never take: data exceptions (22),
// integrity constraints such as a CHECK on topic names (23, but not a concurrent 23505/23P01), program limits (54).
function sqlRefusal(code: string): boolean {
  if (code === '23505' || code === '23P01') return false;
  return /^(22|23|54)[0-9A-Z]{3}$/.test(code);
}

function* causes(error: unknown): Generator<unknown> {
  const seen = new Set<unknown>();
  for (let current = error; current !== undefined && current !== null && !seen.has(current); ) {
    seen.add(current);
    yield current;
    current = (current as { cause?: unknown }).cause;
  }
}

export interface Classified {
  failure: SendFailure;
  /** A stable name for the code: Kafka's (`ERR_MSG_SIZE_TOO_LARGE`), a SQLSTATE, or an `EFF_*` code. */
  code: string;
}

export function classifySendFailure(error: unknown): Classified {
  for (const cause of causes(error)) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'number') {
      if ((cause as { fatal?: unknown }).fatal === true) return { failure: 'fatal', code: kafkaName(cause, code) };
      const fatal = kafkaFatal.get(code);
      if (fatal) return { failure: 'fatal', code: fatal };
      const refusal = kafkaRefusals.get(code);
      if (refusal) return { failure: 'refused', code: refusal };
      const tooMuch = kafkaTooMuch.get(code);
      if (tooMuch) return { failure: 'too-much', code: tooMuch };
    } else if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && sqlRefusal(code)) {
      return { failure: 'refused', code };
    } else if (cause instanceof EffectivelyError && !cause.retryable && !notRefusals.has(cause.code)) {
      // A transport's own coded error that says retrying cannot help (a header Kafka cannot carry, a name the
      // embedded log refuses...), also when a generic wrapper (EFF_TRANSPORT, retryable) carries it as its cause.
      return { failure: 'refused', code: cause.code };
    }
  }
  const first = [...causes(error)].map((cause) => (cause as { code?: unknown }).code).find((code) => code != null);
  return { failure: 'transient', code: first === undefined ? 'unknown' : String(first) };
}

// Coded errors that say nothing about the records: a closed producer, an outage, a time-out.
const notRefusals = new Set<string>([ErrorCodes.EFF_CLOSED, ErrorCodes.EFF_DB_TRANSIENT, ErrorCodes.EFF_TIMEOUT]);

function kafkaName(cause: unknown, code: number): string {
  const type = (cause as { type?: unknown }).type;
  return typeof type === 'string' ? type : (kafkaFatal.get(code) ?? kafkaRefusals.get(code) ?? String(code));
}

/** Text PostgreSQL's `text` columns take: no NUL, no lone surrogate (a reason may quote the refused data). */
export function storableText(text: string): string {
  return text
    .replaceAll('\u0000', '\\0')
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

/**
 * The per-record outcomes of a failed send of `count` records (`details.outcomes`, see `SendOutcome`), or undefined
 * when the transport did not say (it refused the send as a whole).
 */
export function sendOutcomes(error: unknown, count: number): readonly SendOutcome[] | undefined {
  const outcomes = error instanceof EffectivelyError ? error.details.outcomes : undefined;
  return Array.isArray(outcomes) && outcomes.length === count ? (outcomes as SendOutcome[]) : undefined;
}
