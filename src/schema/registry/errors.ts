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
