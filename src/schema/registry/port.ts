/**
 * What the serdes need of a schema registry: the subset of Confluent's Schema Registry API that producers and
 * consumers use. Two implementations: `postgresSchemaRegistry` (tables in the library's schema, for the embedded mode)
 * and `httpSchemaRegistry` (any Confluent-compatible REST API). Both return `withCache`d registries: ids and
 * numbered versions never change, so they are kept in memory once read.
 */
import type { Level } from '../compat/levels.ts';

/** The schema languages the registry and the serdes speak (Confluent's `schemaType` AVRO, JSON and PROTOBUF). */
export type SchemaFormat = 'avro' | 'json' | 'protobuf';

/**
 * A schema's dependency on another registered schema (a Protobuf `import`): the import's `name` as the importing
 * file spells it, and the subject version that holds the imported file.
 */
export interface SchemaReference {
  readonly name: string;
  readonly subject: string;
  readonly version: number;
}

/** A compatibility level of a subject: one of the checker's levels, or `NONE` (no check on register). */
export type CompatibilityLevel = Level | 'NONE';

/**
 * A schema as the registry keeps it: `schema` is its canonical text (Avro and JSON Schema: JSON with keys sorted, no
 * whitespace; Protobuf: the `.proto` text with line ends and trailing blanks normalized).
 */
export interface StoredSchema {
  /** Global id: the same schema (format, canonical text, references) has the same id under every subject. */
  readonly id: number;
  readonly format: SchemaFormat;
  readonly schema: string;
  /** The schemas it imports (Protobuf); absent or empty when none. */
  readonly references?: readonly SchemaReference[];
}

/** One version of a subject. */
export interface SubjectVersion extends StoredSchema {
  readonly subject: string;
  /** 1, 2, … per subject. */
  readonly version: number;
}

/** A schema to register: JSON text or the parsed JSON (Avro, JSON Schema), the `.proto` text (Protobuf). */
export type SchemaInput = string | Record<string, unknown> | unknown[];

export interface SchemaRegistry {
  /**
   * Registers `schema` under `subject` and returns its id. A schema the subject already has returns its id again
   * (nothing is written); a new one is checked against the subject's versions at its compatibility level and refused
   * with `EFF_SCHEMA_INCOMPATIBLE` (the violations in `details.violations`) when it breaks it. `references` name the
   * registered schemas it imports (Protobuf), each by subject and version.
   */
  register(
    subject: string,
    schema: SchemaInput,
    format: SchemaFormat,
    references?: readonly SchemaReference[],
  ): Promise<number>;
  /** The version of `subject` that holds `schema` (with these references), or undefined when it does not have it. */
  lookup(
    subject: string,
    schema: SchemaInput,
    format: SchemaFormat,
    references?: readonly SchemaReference[],
  ): Promise<SubjectVersion | undefined>;
  /** The schema with this global id; `EFF_SCHEMA_UNKNOWN_ID` when there is none. */
  getById(id: number): Promise<StoredSchema>;
  /** The subject's latest version; `EFF_SCHEMA_NOT_FOUND` when the subject has none. */
  getLatest(subject: string): Promise<SubjectVersion>;
  /** One version of the subject; `EFF_SCHEMA_NOT_FOUND` when there is no such version. */
  getVersion(subject: string, version: number): Promise<SubjectVersion>;
  /** The subjects that have at least one version, sorted. */
  subjects(): Promise<string[]>;
  /** The subject's version numbers, ascending (empty when it has none). */
  versions(subject: string): Promise<number[]>;
  /** Sets the compatibility level of `subject`, or the global default with `null` (BACKWARD until set). */
  setCompatibility(subject: string | null, level: CompatibilityLevel): Promise<void>;
  /** The level `subject` is checked at (its own, else the global default); with `null` the global default. */
  getCompatibility(subject: string | null): Promise<CompatibilityLevel>;
}

export const compatibilityLevels: readonly CompatibilityLevel[] = [
  'NONE',
  'BACKWARD',
  'BACKWARD_TRANSITIVE',
  'FORWARD',
  'FORWARD_TRANSITIVE',
  'FULL',
  'FULL_TRANSITIVE',
];

export const isCompatibilityLevel = (value: unknown): value is CompatibilityLevel =>
  (compatibilityLevels as readonly unknown[]).includes(value);

/** The global default compatibility level of a new registry. */
export const defaultCompatibility: CompatibilityLevel = 'BACKWARD';
