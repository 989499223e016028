/**
 * The embedded schema registry: schemas, subject versions and compatibility levels in the library's own tables
 * (migration 006), on the PostgreSQL server or PGlite the rest of the library uses, so the embedded mode needs no
 * registry server. A new version is checked with `checkCompatibility` (src/schema/compat) at the subject's level.
 */
import { librarySchema } from '../../db/identifiers.ts';
import type { Db, Queryable } from '../../db/port.ts';
import { loadSqlSet } from '../../db/sql.ts';
import { invalidOptions } from '../../errors.ts';
import { checkCompatibility } from '../compat/index.ts';
import { parseProto } from '../protobuf/proto-file.ts';
import { withCache } from './cache.ts';
import { type CanonicalSchema, canonicalSchema } from './canonical.ts';
import { incompatibleSchema, registerAtStart, requireSubject, subjectNotFound, unknownSchemaId } from './errors.ts';
import {
  type CompatibilityLevel,
  compatibilityLevels,
  isCompatibilityLevel,
  type SchemaFormat,
  type SchemaReference,
  type SchemaRegistry,
  type StoredSchema,
  type SubjectVersion,
} from './port.ts';
import { importsOf, storedReferences } from './references.ts';

export interface PostgresSchemaRegistryOptions {
  /** Where the tables are (migrated by `migrate()`). */
  db: Db;
  /** Schema of the library's tables (default: the `EFFECTIVELY_SCHEMA` environment variable, else `effectively`). */
  schema?: string;
  /** Keep ids and numbered versions in memory once read (default true). */
  cache?: boolean;
}

const files = {
  lock: 'sql/lock.sql',
  subjectVersions: 'sql/subject-versions.sql',
  version: 'sql/version.sql',
  byId: 'sql/by-id.sql',
  insertSchema: 'sql/insert-schema.sql',
  insertVersion: 'sql/insert-version.sql',
  subjects: 'sql/subjects.sql',
  getConfig: 'sql/get-config.sql',
  setConfig: 'sql/set-config.sql',
};

interface VersionRow extends Record<string, unknown> {
  subject: string;
  version: number;
  id: number;
  format: SchemaFormat;
  schema: string;
  refs: unknown;
  fingerprint?: string;
}

/** The stored fields of a row, references included only when there are some. */
function storedOf(row: { id: number; format: SchemaFormat; schema: string; refs: unknown }): StoredSchema {
  const references = storedReferences(row.refs);
  return { id: row.id, format: row.format, schema: row.schema, ...(references.length > 0 ? { references } : {}) };
}

const toVersion = (row: VersionRow): SubjectVersion => ({
  subject: row.subject,
  version: row.version,
  ...storedOf(row),
});

function requireLevel(level: unknown): CompatibilityLevel {
  if (!isCompatibilityLevel(level)) throw invalidOptions('level', `must be one of ${compatibilityLevels.join(', ')}`);
  return level;
}

/** A registry in the library's tables. */
export function postgresSchemaRegistry(options: PostgresSchemaRegistryOptions): SchemaRegistry {
  const { db } = options;
  const sql = loadSqlSet(import.meta.url, files, librarySchema(options.schema));

  const versionsOf = async (q: Queryable, subject: string) =>
    (await q.query<VersionRow>(sql.subjectVersions, [subject])).rows;

  const levelOf = async (q: Queryable, subject: string | null): Promise<CompatibilityLevel> => {
    const { rows } = await q.query<{ compatibility: CompatibilityLevel }>(sql.getConfig, [subject ?? '']);
    return rows[0]?.compatibility ?? 'BACKWARD';
  };

  /** What the checker is given: the parsed JSON, or a Protobuf file with the text of its imports. */
  const checkable = async (
    q: Queryable,
    format: SchemaFormat,
    text: string,
    references: readonly SchemaReference[],
  ) => {
    if (format !== 'protobuf') return JSON.parse(text);
    const imports = await importsOf(references, async (subject, version) => {
      const { rows } = await q.query<VersionRow>(sql.version, [subject, version]);
      if (!rows[0]) throw subjectNotFound(subject, version);
      return storedOf(rows[0]);
    });
    return { schema: text, imports };
  };

  /** Refuses `next` when it breaks the subject's level against the versions it already has (oldest first). */
  const check = async (
    q: Queryable,
    subject: string,
    level: CompatibilityLevel,
    existing: VersionRow[],
    next: CanonicalSchema,
  ) => {
    const candidate = await checkable(q, next.format, next.text, next.references);
    if (next.format === 'protobuf') parseProto(candidate); // its imports must all be there, whatever the level
    if (level === 'NONE' || existing.length === 0) return;
    const other = existing.findIndex((row) => row.format !== next.format);
    if (other >= 0) {
      const message = `the subject holds ${existing[other]?.format} schemas; a ${next.format} schema cannot follow`;
      throw incompatibleSchema(subject, level, [
        { path: '', rule: 'format-changed', message, direction: 'BACKWARD', against: other },
      ]);
    }
    const old = [];
    for (const row of existing) old.push(await checkable(q, row.format, row.schema, storedReferences(row.refs)));
    const result = checkCompatibility({ format: next.format, level, old, next: candidate });
    if (!result.compatible) throw incompatibleSchema(subject, level, result.violations);
  };

  const registry: SchemaRegistry = {
    async register(subject, schema, format, references) {
      requireSubject(subject);
      const next = canonicalSchema(schema, format, references);
      const registration = db.transaction(async (tx) => {
        await tx.query(sql.lock);
        const existing = await versionsOf(tx, subject);
        const same = existing.find((row) => row.fingerprint === next.fingerprint);
        if (same) return same.id;
        await check(tx, subject, await levelOf(tx, subject), existing, next);
        const { rows } = await tx.query<{ id: number }>(sql.insertSchema, [
          next.format,
          next.fingerprint,
          next.text,
          JSON.stringify(next.references),
        ]);
        const id = rows[0]!.id;
        await tx.query(sql.insertVersion, [subject, id]);
        return id;
      });
      return registration.catch((error: unknown) => Promise.reject(registerAtStart(error, subject)));
    },
    async lookup(subject, schema, format, references) {
      const { fingerprint } = canonicalSchema(schema, format, references);
      const rows = await versionsOf(db, requireSubject(subject)).catch((error: unknown) =>
        Promise.reject(registerAtStart(error, subject)),
      );
      const row = rows.find((r) => r.fingerprint === fingerprint);
      return row && toVersion(row);
    },
    async getById(id) {
      const { rows } = await db.query<VersionRow>(sql.byId, [id]);
      const row = rows[0];
      if (!row) throw unknownSchemaId(id);
      return storedOf(row);
    },
    async getLatest(subject) {
      const { rows } = await db.query<VersionRow>(sql.version, [requireSubject(subject), null]);
      if (!rows[0]) throw subjectNotFound(subject, 'latest');
      return toVersion(rows[0]);
    },
    async getVersion(subject, version) {
      const { rows } = await db.query<VersionRow>(sql.version, [requireSubject(subject), version]);
      if (!rows[0]) throw subjectNotFound(subject, version);
      return toVersion(rows[0]);
    },
    async subjects() {
      return (await db.query<{ subject: string }>(sql.subjects)).rows.map((row) => row.subject);
    },
    async versions(subject) {
      return (await versionsOf(db, requireSubject(subject))).map((row) => row.version);
    },
    async setCompatibility(subject, level) {
      await db.query(sql.setConfig, [subject === null ? '' : requireSubject(subject), requireLevel(level)]);
    },
    getCompatibility: (subject) => levelOf(db, subject === null ? null : requireSubject(subject)),
  };
  return options.cache === false ? registry : withCache(registry);
}
