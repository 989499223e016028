/**
 * A schema's references turned into what a checker or a parser needs: the text of every file it imports, directly or
 * through another import, by import name. The referenced versions are read from the registry holding the schema.
 */
import { EffectivelyError, ErrorCodes } from '../../errors.ts';
import type { SchemaReference } from './port.ts';

/** How a referenced subject version is read (its text and its own references). */
export type VersionReader = (
  subject: string,
  version: number,
) => Promise<{ schema: string; references?: readonly SchemaReference[] | undefined }>;

/** Deeper than any import graph a person writes: a reference cycle or a hostile chain stops here. */
const maxImports = 200;

/** The references read from a stored column (jsonb comes back parsed, or as text on some drivers). */
export function storedReferences(value: unknown): SchemaReference[] {
  const list = typeof value === 'string' ? JSON.parse(value) : value;
  return Array.isArray(list) ? (list as SchemaReference[]) : [];
}

/** Import name → file text for `references` and theirs; `EFF_SCHEMA_INVALID` when one cannot be read. */
export async function importsOf(
  references: readonly SchemaReference[] | undefined,
  read: VersionReader,
): Promise<Record<string, string>> {
  const imports: Record<string, string> = {};
  const pending = [...(references ?? [])];
  let count = 0;
  while (pending.length > 0) {
    const reference = pending.shift() as SchemaReference;
    if (imports[reference.name] !== undefined) continue;
    if (++count > maxImports)
      throw new EffectivelyError(ErrorCodes.EFF_SCHEMA_INVALID, `more than ${maxImports} imported schemas`);
    let found: Awaited<ReturnType<VersionReader>>;
    try {
      found = await read(reference.subject, reference.version);
    } catch (error) {
      if (!(error instanceof EffectivelyError) || error.code !== ErrorCodes.EFF_SCHEMA_NOT_FOUND) throw error;
      throw new EffectivelyError(
        ErrorCodes.EFF_SCHEMA_INVALID,
        `reference \`${reference.name}\` names version ${reference.version} of \`${reference.subject}\`, which does not exist`,
        { cause: error },
      );
    }
    imports[reference.name] = found.schema;
    pending.push(...(found.references ?? []));
  }
  return imports;
}
