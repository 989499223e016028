import { EffectivelyError, ErrorCodes } from '../errors.ts';

const identifier = /^[a-z_][a-z0-9_]{0,62}$/;

/** Schema and table names are spliced into SQL, so only plain lower-case identifiers are accepted. */
export function assertIdentifier(name: string, what = 'identifier'): string {
  if (!identifier.test(name)) {
    throw new EffectivelyError(
      ErrorCodes.EFF_INVALID_IDENTIFIER,
      `${what} \`${name}\` must match ${identifier.source} (lower-case letters, digits, underscores)`,
      { details: { name } },
    );
  }
  return name;
}

/** A table name, optionally schema-qualified (`schema.table`), each part validated. */
export function assertQualifiedName(name: string, what = 'table'): string {
  const parts = name.split('.');
  if (parts.length > 2) assertIdentifier(name, what);
  for (const part of parts) assertIdentifier(part, what);
  return name;
}
