import type { Event } from '../../envelope/event.ts';
import { EffectivelyError, ErrorCodes, invalidOptions } from '../../errors.ts';

/**
 * Where a topic migration stands:
 * - `v1-only`: writers write the old topic only; the new topic is declared but empty.
 * - `dual-write`: each event for the old topic is written to both topics, the new one up-cast, with the SAME event
 *   id, in the same transaction; consumers move to the new topic one by one (reading both meanwhile is safe: one
 *   consumer group dedups across topics by event id).
 * - `v2-only`: the old topic is retired: nothing more is written to it (events still addressed to it are up-cast and
 *   written to the new topic only).
 */
export type TopicPhase = 'v1-only' | 'dual-write' | 'v2-only';

export const topicPhases: readonly TopicPhase[] = ['v1-only', 'dual-write', 'v2-only'];

/** What an up-caster returns: the new shape of the data, and a new type if the type changes with it. */
export interface Upcast<T = unknown> {
  data: T;
  type?: string;
}

/**
 * Turns an event of the old topic into its new shape. The envelope keeps the id, key, source, time, version and
 * headers; only the data (and optionally the type) change, so the up-cast event is the same fact.
 */
export type Upcaster<From = unknown, To = unknown> = (event: Event<From>) => Upcast<To>;

/** An incompatible change of one topic's events, moved to a new topic: `from` → `to`, with its up-caster. */
export interface TopicVersion {
  readonly from: string;
  readonly to: string;
  readonly upcast: Upcaster;
  readonly phase: TopicPhase;
}

export interface TopicVersionInput<From = unknown, To = unknown> {
  from: string;
  to: string;
  upcast: Upcaster<From, To>;
  /** Default `v1-only`. Advance it by declaring again with the next phase (it is configuration, e.g. per deploy). */
  phase?: TopicPhase;
}

/** Declares a topic version, e.g. `order-events` → `order-events.v2`; checks the declaration. */
export function declareTopicVersion<From, To>(input: TopicVersionInput<From, To>): TopicVersion {
  const { from, to, upcast } = input;
  const phase = input.phase ?? 'v1-only';
  if (typeof from !== 'string' || from.length === 0) throw invalidOptions('from', 'a non-empty topic name');
  if (typeof to !== 'string' || to.length === 0) throw invalidOptions('to', 'a non-empty topic name');
  if (from === to) throw invalidOptions('to', `must differ from \`from\` (${from})`);
  if (typeof upcast !== 'function') throw invalidOptions('upcast', 'a function (event) => { data, type? }');
  if (!topicPhases.includes(phase)) throw invalidOptions('phase', topicPhases.join(', '));
  return Object.freeze({ from, to, upcast: upcast as Upcaster, phase });
}

/**
 * The declarations by old topic, checked as a set: one declaration per old topic and no cycle (chains such as
 * v1 → v2 → v3 are fine).
 */
export function indexVersions(versions: readonly TopicVersion[]): ReadonlyMap<string, TopicVersion> {
  const byFrom = new Map<string, TopicVersion>();
  for (const version of versions) {
    if (byFrom.has(version.from)) throw invalidOptions('versions', `\`${version.from}\` is declared twice`);
    byFrom.set(version.from, version);
  }
  for (const start of byFrom.keys()) {
    let topic: string | undefined = start;
    for (let steps = 0; topic !== undefined; steps++) {
      if (steps > byFrom.size) throw invalidOptions('versions', `the declarations from \`${start}\` form a cycle`);
      topic = byFrom.get(topic)?.to;
    }
  }
  return byFrom;
}

/** The event in its new topic and shape: same id, key, source, time, version and headers; `to` as its topic. */
export function upcastEvent(event: Event, version: TopicVersion): Event {
  const next = version.upcast(event);
  if (typeof next !== 'object' || next === null || !('data' in next)) {
    throw new EffectivelyError(
      ErrorCodes.EFF_INVALID_EVENT,
      `up-caster ${version.from} → ${version.to}: return { data, type? }`,
    );
  }
  if (next.type !== undefined && (typeof next.type !== 'string' || next.type.length === 0)) {
    throw new EffectivelyError(ErrorCodes.EFF_INVALID_EVENT, `up-caster ${version.from} → ${version.to}: bad type`);
  }
  return { ...event, topic: version.to, type: next.type ?? event.type, data: next.data };
}
