import { createHash } from 'node:crypto';
import type { Event } from './event.ts';
import { isUuid } from './uuidv7.ts';

/**
 * An event's identity, as CloudEvents defines it: `source` + `id` (the id is any non-empty string, unique per source).
 * Consumers deduplicate on a **dedup key** derived from it, a UUID, so `processed_events.event_id` (and the other
 * `event_id` columns) keep their type, size and index:
 *
 * - an id that is a UUID (8-4-4-4-12 hex digits, any case) is its own key, lowercased, whatever the source. That is the
 *   key every earlier version wrote, so an event applied before an upgrade stays a duplicate after it; and a UUID is
 *   unique on its own (RFC 9562), so the same UUID from two sources is taken for one event republished (a bridge, a
 *   redrive from another service). See docs/cloudevents.md for this choice;
 * - any other id (`order-2026-000123`, `evt_…`, `42`) gets a name-based UUID (version 5, SHA-1) in the namespace
 *   `eventIdentityNamespace` over the name `<byte length of source>:<source><id>` (UTF-8). The length prefix makes the
 *   name unambiguous whatever the two strings contain, so `("/a", "1")` and `("/b", "1")` are two events.
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

/** The dedup key of the event `id` from `source` (see the module's comment for the rule). */
export function dedupKey(source: string, id: string): string {
  if (isUuid(id)) return id.toLowerCase();
  return uuidv5(eventIdentityNamespace, `${Buffer.byteLength(source, 'utf8')}:${source}${id}`);
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
