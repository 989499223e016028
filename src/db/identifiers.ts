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
