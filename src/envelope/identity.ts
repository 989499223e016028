import { createHash } from 'node:crypto';
import type { Event } from './event.ts';
import { isUuid } from './uuidv7.ts';

/**
 * An event's identity, as CloudEvents defines it: `source` + `id` (the id is any non-empty string, unique per source).
 * Consumers deduplicate on a **dedup key** derived from it, a UUID, so `processed_events.event_id` (and the other
 * `event_id` columns) keep their type, size and index:
 *
 * - an id that is a random or time-and-random UUID (RFC 9562 variant, version 4 or 7; any case) is its own key,
 *   lowercased, whatever the source. Such a UUID is unique on its own, so the same one from two sources is one event
 *   republished (a bridge, a redrive from another service); and it is the key every earlier version wrote for the
 *   library's own events (UUIDv7), so they stay duplicates across an upgrade. See docs/cloudevents.md;
 * - any other id gets a name-based UUID (version 5, SHA-1) in the namespace `eventIdentityNamespace` over the name
 *   `<byte length of source>:<source><id>` (UTF-8). That includes UUIDs nothing makes unique alone: name-based ones
 *   (v3, v5: two producers hashing the same name get the same id), the nil and max UUIDs, v1/v6 (a clock and a node
 *   field a producer may fill as it likes), v8 and other variants; their id is lowercased first (UUIDs ignore case).
 *   The length prefix makes the name unambiguous whatever the two strings contain, so `("/a", "1")` and `("/b", "1")`
 *   are two events.
 */
export const eventIdentityNamespace = 'e3c18c83-be5d-57a7-a4e5-f80cb14e353f';

function formatUuid(bytes: Uint8Array): string {
  const hex = Buffer.from(bytes).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** A name-based UUID, version 5 (RFC 9562 §5.5): SHA-1 over the namespace's 16 bytes and the name's bytes. */
export function uuidv5(namespace: string, name: string | Uint8Array): string {
  if (!isUuid(namespace)) throw new TypeError(`uuidv5 namespace \`${namespace}\` is not a UUID`);
  const hash = createHash('sha1')
    .update(Buffer.from(namespace.replaceAll('-', ''), 'hex'))
    .update(typeof name === 'string' ? Buffer.from(name, 'utf8') : name)
    .digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  return formatUuid(hash.subarray(0, 16));
}

const selfKeyedUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[47][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** True for a UUID trusted as its own dedup key: RFC 9562 variant, version 4 (random) or 7 (time and random). */
export function isSelfKeyedUuid(id: string): boolean {
  return selfKeyedUuid.test(id);
}

/** The dedup key of the event `id` from `source` (see the module's comment for the rule). */
export function dedupKey(source: string, id: string): string {
  const canonical = canonicalId(id);
  if (isSelfKeyedUuid(canonical)) return canonical;
  return uuidv5(eventIdentityNamespace, `${Buffer.byteLength(source, 'utf8')}:${source}${canonical}`);
}

/** The dedup key of a decoded event: what `processed_events`, dead letters and key holds store for it. */
export function dedupKeyOf(event: Pick<Event, 'id' | 'source'>): string {
  return dedupKey(event.source, event.id);
}

/** A lone UTF-16 surrogate: a JS string that is no Unicode text (the CloudEvents String type forbids surrogates). */
const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Why `value` cannot be an identity attribute (`id`, `source`), or undefined when it can: any non-empty string of
 * Unicode text is accepted (a lone surrogate cannot be written as UTF-8, so two different ids would share one key).
 */
export function identityProblem(value: string): string | undefined {
  if (value.length === 0) return 'is empty';
  if (loneSurrogate.test(value)) return 'holds a lone UTF-16 surrogate (not Unicode text)';
  return undefined;
}

/** An id as the event carries it: a UUID in its canonical lowercase form (UUIDs ignore case), any other id unchanged. */
export function canonicalId(id: string): string {
  return isUuid(id) ? id.toLowerCase() : id;
}
