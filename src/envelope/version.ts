/**
 * The event's `version` as read from the wire, one rule for both content modes: absent, a JSON integer, or a string of
 * decimal digits (binary mode's `ce_version` header; a structured producer that writes it as a string). Anything else —
 * an empty string, `1e3`, `0x10`, ` 2`, a fraction, an integer past 2^53 — is refused, so one version has one spelling
 * and an empty header never reads as version 0.
 *
 * Returns the version, `undefined` when absent, or `null` when refused.
 */
export function parseVersion(value: unknown): number | undefined | null {
  if (value === undefined) return undefined;
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : null;
  if (typeof value !== 'string' || !/^-?[0-9]+$/.test(value)) return null;
  const version = Number(value);
  return Number.isSafeInteger(version) ? version : null;
}
