import { EffectivelyError } from '../errors.ts';

/**
 * What else counts as permanent (dead-lettered at once, never retried): error classes (`instanceof`) and codes
 * (`error.code`, e.g. a SQLSTATE such as `23505`, or an application's own code).
 */
export type PermanentErrors = readonly (string | (abstract new (...args: never[]) => unknown))[];

/**
 * True when retrying cannot help: a non-retryable `EffectivelyError` (`PermanentError`, decode failures), or an error
 * matching `permanent`. Everything else is retried up to the limit, then dead-lettered.
 */
export function isPermanent(error: unknown, permanent: PermanentErrors = []): boolean {
  if (error instanceof EffectivelyError) return !error.retryable;
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return permanent.some((match) => (typeof match === 'string' ? match === code : error instanceof match));
}
