import type { Queryable } from '../../db/port.ts';
import type { Event } from '../../envelope/event.ts';
import { EffectivelyError, ErrorCodes } from '../../errors.ts';
import type { Outbox } from '../../outbox/outbox.ts';
import { indexVersions, type TopicVersion, upcastEvent } from './declare.ts';

/**
 * The events to write for `events` given the topic versions in force, in order:
 * - an event for an old topic in `v1-only` is written as it is;
 * - in `dual-write` it is written twice: as it is, then up-cast to the new topic with the SAME id (one fact, two
 *   topics: a consumer group reading both applies it once);
 * - in `v2-only` only the up-cast event is written (the old topic gets nothing more).
 * Up-cast events go through the next declaration of a chain (v1 → v2 → v3). An event addressed straight to a new
 * topic before its `v2-only` phase is refused (`EFF_INVALID_EVENT`): the readers of the old topic would never see it.
 *
 * Call it inside the transaction that enqueues, so both versions commit together or not at all (`enqueueVersioned`).
 */
export function expandForVersions(events: Event | readonly Event[], versions: readonly TopicVersion[]): Event[] {
  const list = Array.isArray(events) ? (events as readonly Event[]) : [events as Event];
  if (versions.length === 0) return [...list];
  const byFrom = indexVersions(versions);
  const early = new Map(versions.filter((v) => v.phase !== 'v2-only').map((v) => [v.to, v]));

  function expand(event: Event): Event[] {
    const version = byFrom.get(event.topic);
    if (version === undefined || version.phase === 'v1-only') return [event];
    const next = expand(upcastEvent(event, version));
    return version.phase === 'dual-write' ? [event, ...next] : next;
  }

  return list.flatMap((event) => {
    const declared = early.get(event.topic);
    if (declared) {
      throw new EffectivelyError(
        ErrorCodes.EFF_INVALID_EVENT,
        `event ${event.id} is addressed to \`${event.topic}\` during \`${declared.phase}\`: write \`${declared.from}\` ` +
          'until the `v2-only` phase (its readers would miss it)',
        { details: { id: event.id, topic: event.topic, phase: declared.phase } },
      );
    }
    return expand(event);
  });
}

/** The outbox's `expand` plug-in for these versions: `createOutbox({ expand: versionExpander(versions) })`. */
export function versionExpander(versions: readonly TopicVersion[]): (events: readonly Event[]) => Event[] {
  return (events) => expandForVersions(events, versions);
}

/** `outbox.enqueue` of the expanded events, in the caller's transaction: every version commits with the rest or none. */
export function enqueueVersioned(
  outbox: Outbox,
  tx: Queryable,
  events: Event | readonly Event[],
  versions: readonly TopicVersion[],
): Promise<void> {
  return outbox.enqueue(tx, expandForVersions(events, versions));
}
