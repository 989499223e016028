import { canonicalSchema } from './canonical.ts';
import type { SchemaRegistry, StoredSchema, SubjectVersion } from './port.ts';

/** Remembers a settled promise by key; a rejected one is forgotten so the next call asks again. */
function memo<T>(cache: Map<string, Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
  let result = cache.get(key);
  if (result === undefined) {
    result = load();
    cache.set(key, result);
    result.catch(() => cache.delete(key));
  }
  return result;
}

/**
 * Keeps in memory what cannot change: schemas by id, numbered versions, and the id (and version) a subject gave a
 * schema. The latest version, the subject list and the compatibility levels are always asked for.
 */
export function withCache(registry: SchemaRegistry): SchemaRegistry {
  const byId = new Map<string, Promise<StoredSchema>>();
  const byVersion = new Map<string, Promise<SubjectVersion>>();
  const registered = new Map<string, Promise<number>>();
  const found = new Map<string, Promise<SubjectVersion | undefined>>();
  return {
    async register(subject, schema, format, references) {
      const key = `${subject}\n${canonicalSchema(schema, format, references).fingerprint}`;
      return memo(registered, key, () => registry.register(subject, schema, format, references));
    },
    async lookup(subject, schema, format, references) {
      const key = `${subject}\n${canonicalSchema(schema, format, references).fingerprint}`;
      const result = await memo(found, key, () => registry.lookup(subject, schema, format, references));
      if (result === undefined) found.delete(key);
      return result;
    },
    getById: (id) => memo(byId, String(id), () => registry.getById(id)),
    getVersion: (subject, version) =>
      memo(byVersion, `${subject}\n${version}`, () => registry.getVersion(subject, version)),
    getLatest: (subject) => registry.getLatest(subject),
    subjects: () => registry.subjects(),
    versions: (subject) => registry.versions(subject),
    setCompatibility: (subject, level) => registry.setCompatibility(subject, level),
    getCompatibility: (subject) => registry.getCompatibility(subject),
  };
}
