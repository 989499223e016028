// Failure groups: dead letters that failed for the same cause share a fingerprint, whatever ids, numbers or quoted
// values their messages carry.
import { createHash } from 'node:crypto';
import { RetryHeaders } from '../consumer/retry-topics.ts';
import type { DeadLetter } from '../deadletter/store.ts';

/** What a failure is, once the values that differ from record to record are taken out. */
export interface FailureCause {
  /** The error's class (`TypeError`, `PermanentError`), or the dead letter's code when the reason names none. */
  errorClass: string;
  /** The message with uuids, numbers, hex and quoted values replaced (`order <uuid> has <n> seats`). */
  message: string;
  /** The first frame of the stack when the letter kept one (a retry topic's header), without line and column. */
  topFrame: string | null;
  /** 16 hex characters over the three above. */
  fingerprint: string;
}

const uuid = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const hex = /\b0x[0-9a-f]+\b|\b[0-9a-f]{16,}\b/gi;
const quoted = /"[^"]*"|'[^']*'|`[^`]*`/g;
const number = /\b\d+(\.\d+)?\b/g;

/** A message with what varies from record to record replaced by placeholders, on one line, at most 300 characters. */
export function normalizeMessage(message: string): string {
  return message
    .replace(uuid, '<uuid>')
    .replace(hex, '<hex>')
    .replace(quoted, '<str>')
    .replace(number, '<n>')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 300);
}

/** `    at applyOrder (/app/src/orders.ts:41:7)` → `applyOrder (/app/src/orders.ts)`. */
export function topFrameOf(stack: string | undefined): string | null {
  const line = stack?.split('\n').find((l) => /^\s*at /.test(l));
  if (!line) return null;
  return line
    .trim()
    .replace(/^at /, '')
    .replace(/:\d+:\d+(\)?)$/, '$1');
}

/** The cause of a dead letter: `reason` is `Class: message` as the consumer kept it. */
export function failureCause(letter: Pick<DeadLetter, 'code' | 'reason' | 'headers'>): FailureCause {
  const match = /^([A-Za-z_$][\w$.]*(?:Error|Exception)?): ([\s\S]*)$/.exec(letter.reason);
  const errorClass = match?.[1] ?? letter.code;
  const message = normalizeMessage(match?.[2] ?? letter.reason);
  const topFrame = topFrameOf(letter.headers[RetryHeaders.errorStack]?.toString('utf8'));
  const fingerprint = createHash('sha256')
    .update(`${errorClass}\n${message}\n${topFrame ?? ''}`)
    .digest('hex')
    .slice(0, 16);
  return { errorClass, message, topFrame, fingerprint };
}
