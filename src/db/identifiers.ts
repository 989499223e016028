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

/**
 * The library's schema: the one given, else the `EFFECTIVELY_SCHEMA` environment variable, else `effectively`. Every
 * constructor and the CLI take it from here, so a deployment sets it once (the variable) instead of on each of them.
 */
export function librarySchema(given?: string | undefined): string {
  return assertIdentifier(given ?? defaultSchema(), 'schema');
}

/** `EFFECTIVELY_SCHEMA`, else `effectively` (not validated here: `librarySchema` does). */
export function defaultSchema(): string {
  const fromEnv = process.env.EFFECTIVELY_SCHEMA;
  return fromEnv === undefined || fromEnv === '' ? 'effectively' : fromEnv;
}
