// Dead letters grouped by cause (the fingerprint), optionally split by topic, consumer group or event type: how
// many, since when, until when, and the trend over the last hours.
import type { DeadLetter } from '../deadletter/store.ts';
import { failureCause } from './fingerprint.ts';
import { eventTypeOf } from './letters.ts';

export type GroupBy = 'cause' | 'topic' | 'consumer' | 'type';
export const groupings: readonly GroupBy[] = ['cause', 'topic', 'consumer', 'type'];

export interface FailureGroup {
  fingerprint: string;
  errorClass: string;
  message: string;
  topFrame: string | null;
  code: string;
  /** The value of the `by` dimension (a topic, a group, an event type); null when grouped by cause alone. */
  by: string | null;
  count: number;
  firstSeen: Date;
  lastSeen: Date;
  /** Letters whose last failure fell in each of the last 12 hours, oldest first. */
  trend: number[];
  /** The letters' ids (what a redrive of the group takes, frozen when the job starts). */
  ids: string[];
}

const hourMs = 3_600_000;
const trendHours = 12;

function dimension(letter: DeadLetter, by: GroupBy): string | null {
  if (by === 'topic') return letter.topic;
  if (by === 'consumer') return letter.consumer;
  if (by === 'type') return eventTypeOf(letter) ?? '(none)';
  return null;
}

/** Groups `letters` by fingerprint (and `by`), the largest group first. */
export function failureGroups(letters: readonly DeadLetter[], by: GroupBy = 'cause', now = Date.now()): FailureGroup[] {
  const groups = new Map<string, FailureGroup>();
  for (const letter of letters) {
    const cause = failureCause(letter);
    const value = dimension(letter, by);
    const id = `${cause.fingerprint}\n${value ?? ''}`;
    let group = groups.get(id);
    if (!group) {
      group = {
        fingerprint: cause.fingerprint,
        errorClass: cause.errorClass,
        message: cause.message,
        topFrame: cause.topFrame,
        code: letter.code,
        by: value,
        count: 0,
        firstSeen: letter.firstFailedAt,
        lastSeen: letter.lastFailedAt,
        trend: new Array<number>(trendHours).fill(0),
        ids: [],
      };
      groups.set(id, group);
    }
    group.count += 1;
    group.ids.push(letter.id);
    if (letter.firstFailedAt < group.firstSeen) group.firstSeen = letter.firstFailedAt;
    if (letter.lastFailedAt > group.lastSeen) group.lastSeen = letter.lastFailedAt;
    const hoursAgo = Math.floor((now - letter.lastFailedAt.getTime()) / hourMs);
    if (hoursAgo >= 0 && hoursAgo < trendHours) group.trend[trendHours - 1 - hoursAgo]! += 1;
  }
  return [...groups.values()].sort((a, b) => b.count - a.count || b.lastSeen.getTime() - a.lastSeen.getTime());
}
