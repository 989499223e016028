/** The registry's coded errors, shared by both implementations, the HTTP server and the serdes. */
import { EffectivelyError, ErrorCodes, invalidOptions } from '../../errors.ts';
import type { Violation } from '../compat/violation.ts';

export function unknownSchemaId(id: number): EffectivelyError {
  return new EffectivelyError(ErrorCodes.EFF_SCHEMA_UNKNOWN_ID, `schema id ${id} is not in the registry`, {
    details: { id },
  });
}

export function subjectNotFound(subject: string, version?: number | 'latest'): EffectivelyError {
  const what = version === undefined || version === 'latest' ? `subject \`${subject}\` has no version` : '';
  return new EffectivelyError(
    ErrorCodes.EFF_SCHEMA_NOT_FOUND,
    what || `subject \`${subject}\` has no version ${version}`,
    { details: { subject, ...(version === undefined ? {} : { version }) } },
  );
}

export function incompatibleSchema(subject: string, level: string, violations: Violation[]): EffectivelyError {
  const lines = violations.map((v) => `${v.direction ?? ''} vs version ${(v.against ?? 0) + 1}: ${v.message}`);
  return new EffectivelyError(
    ErrorCodes.EFF_SCHEMA_INCOMPATIBLE,
    `schema refused for subject \`${subject}\` (level ${level}): ${lines.join('; ')}`,
    { details: { subject, level, violations } },
  );
}

export function registryUnavailable(message: string, cause?: unknown): EffectivelyError {
  return new EffectivelyError(ErrorCodes.EFF_SCHEMA_REGISTRY_UNAVAILABLE, message, { retryable: true, cause });
}

/** A subject name: any non-empty string. */
export function requireSubject(subject: unknown): string {
  if (typeof subject !== 'string' || subject.length === 0)
    throw invalidOptions('subject', 'must be a non-empty string');
  return subject;
}

/**
 * `EFF_NESTED_TRANSACTION` of a database of one session (PGlite, a pool of one connection) met by a registration or a look-up, with the way out:
 * inside `outbox.enqueue`'s transaction the registry cannot reach the session that transaction holds.
 */
export function registerAtStart(error: unknown, subject: string): unknown {
  if (!(error instanceof EffectivelyError) || error.code !== ErrorCodes.EFF_NESTED_TRANSACTION) return error;
  return new EffectivelyError(
    ErrorCodes.EFF_NESTED_TRANSACTION,
    `the schema of subject \`${subject}\` cannot be registered (or looked up) from inside a transaction on a database ` +
      'of one session (PGlite, a pool of one connection), such as the one `outbox.enqueue` writes in: register it at ' +
      'start-up, before the first ' +
      'enqueue (`await serde.register(topic)`), or as a deploy step',
    { cause: error, details: { ...error.details, subject } },
  );
}
