/**
 * A client of a Confluent-compatible Schema Registry REST API (Confluent's own, Apicurio's `/apis/ccompat/v7`,
 * or this library's `serveSchemaRegistry`), over the global `fetch`. Only the endpoints the port needs:
 * `POST /subjects/{s}/versions`, `POST /subjects/{s}`, `GET /schemas/ids/{id}`, `GET /subjects[/{s}/versions[/{v}]]`,
 * `GET|PUT /config[/{s}]`.
 */
import { EffectivelyError, ErrorCodes, invalidOptions } from '../../errors.ts';
import type { Violation } from '../compat/violation.ts';
import { withCache } from './cache.ts';
import { formatOf, referencesOf, schemaTypeOf } from './canonical.ts';
import { incompatibleSchema, registryUnavailable, requireSubject, subjectNotFound, unknownSchemaId } from './errors.ts';
import {
  type CompatibilityLevel,
  isCompatibilityLevel,
  type SchemaFormat,
  type SchemaReference,
  type SchemaRegistry,
  type StoredSchema,
  type SubjectVersion,
} from './port.ts';

export interface HttpSchemaRegistryOptions {
  /** Base URL of the API, e.g. `http://127.0.0.1:8081` (Apicurio: `http://host:8080/apis/ccompat/v7`). Required. */
  url: string;
  /** Extra headers sent with every request, e.g. `authorization` (default none). */
  headers?: Record<string, string>;
  /** How long one request may take before it fails as unavailable (default 10,000 ms). */
  timeoutMs?: number;
  /** Keep ids and numbered versions in memory once read (default true). */
  cache?: boolean;
}

const mediaType = 'application/vnd.schemaregistry.v1+json';

interface Reply {
  status: number;
  body: Record<string, unknown> & { error_code?: number; message?: string };
  raw: unknown;
}

/** What a registry's error reply means, in our codes (404s and 409s are decided by the caller). */
function refusal(reply: Reply, what: string): EffectivelyError {
  const message = `${what}: registry answered ${reply.status} ${reply.body.message ?? ''}`.trim();
  if (reply.status === 422)
    return new EffectivelyError(ErrorCodes.EFF_SCHEMA_INVALID, message, { details: reply.body });
  if (reply.status >= 500 || reply.status === 408 || reply.status === 429) return registryUnavailable(message);
  return new EffectivelyError(ErrorCodes.EFF_SCHEMA_REGISTRY_UNAVAILABLE, message, {
    retryable: false,
    details: { status: reply.status, ...reply.body },
  });
}

/**
 * A number the registry answered (an id or a version): a non-negative integer, or the answer was not the registry's
 * (a gateway's HTML page with status 200 parsed to NaN, cached, and written as id 0 into every record).
 */
function numberIn(body: Record<string, unknown>, field: 'id' | 'version', what: string): number {
  const value = body[field];
  const number =
    typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (Number.isSafeInteger(number) && number >= 0 && number <= 0x7fffffff) return number;
  const shown = JSON.stringify(value)?.slice(0, 50) ?? 'nothing';
  throw registryUnavailable(
    `${what}: the answer has no valid \`${field}\` (${shown}): not a schema registry's answer?`,
  );
}

/** The references of an answer, when it has some. */
function referencesIn(body: Record<string, unknown>): { references?: SchemaReference[] } {
  const references = referencesOf(body.references);
  return references.length > 0 ? { references } : {};
}

function toVersion(body: Record<string, unknown>, what: string): SubjectVersion {
  return {
    subject: String(body.subject),
    version: numberIn(body, 'version', what),
    id: numberIn(body, 'id', what),
    format: formatOf(body.schemaType),
    schema: String(body.schema),
    ...referencesIn(body),
  };
}

/** A registry behind a Confluent-compatible REST API. */
export function httpSchemaRegistry(options: HttpSchemaRegistryOptions): SchemaRegistry {
  if (typeof options.url !== 'string' || !/^https?:\/\//.test(options.url)) {
    throw invalidOptions('url', 'must be an http(s) URL of a Confluent-compatible registry API');
  }
  const base = options.url.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 10_000;
  const subjectPath = (subject: string) => `/subjects/${encodeURIComponent(requireSubject(subject))}`;

  async function call(method: string, path: string, payload?: unknown): Promise<Reply> {
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, {
        method,
        headers: {
          accept: `${mediaType}, application/json`,
          ...(payload === undefined ? {} : { 'content-type': mediaType }),
          ...options.headers,
        },
        ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw registryUnavailable(`${method} ${path}: registry not reachable: ${(error as Error).message}`, error);
    }
    const text = await response.text();
    let raw: unknown = null;
    try {
      raw = text.length === 0 ? null : JSON.parse(text);
    } catch {
      raw = { message: text.slice(0, 200) };
    }
    const body = (raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? raw : {}) as Reply['body'];
    return { status: response.status, body, raw };
  }

  const schemaBody = (schema: unknown, format: SchemaFormat, references: readonly SchemaReference[] | undefined) => ({
    schema: typeof schema === 'string' ? schema : JSON.stringify(schema),
    ...(format === 'avro' ? {} : { schemaType: schemaTypeOf(format) }),
    ...(references && references.length > 0 ? { references: referencesOf(references) } : {}),
  });

  async function version(subject: string, which: number | 'latest'): Promise<SubjectVersion> {
    const reply = await call('GET', `${subjectPath(subject)}/versions/${which}`);
    if (reply.status === 404) throw subjectNotFound(subject, which);
    if (reply.status !== 200) throw refusal(reply, `version ${which} of ${subject}`);
    return toVersion({ subject, ...reply.body }, `version ${which} of ${subject}`);
  }

  const registry: SchemaRegistry = {
    async register(subject, schema, format, references) {
      const reply = await call('POST', `${subjectPath(subject)}/versions`, schemaBody(schema, format, references));
      if (reply.status === 409) {
        const given = reply.body.violations;
        const violations: Violation[] = Array.isArray(given)
          ? (given as Violation[])
          : [{ path: '', rule: 'registry', message: String(reply.body.message ?? 'incompatible') }];
        throw incompatibleSchema(subject, String(reply.body.level ?? 'of the subject'), violations);
      }
      if (reply.status !== 200) throw refusal(reply, `register under ${subject}`);
      return numberIn(reply.body, 'id', `register under ${subject}`);
    },
    async lookup(subject, schema, format, references) {
      const reply = await call('POST', subjectPath(subject), schemaBody(schema, format, references));
      if (reply.status === 404) return undefined;
      if (reply.status !== 200) throw refusal(reply, `look up a schema under ${subject}`);
      return toVersion({ subject, schemaType: schemaTypeOf(format), ...reply.body }, `look up under ${subject}`);
    },
    async getById(id): Promise<StoredSchema> {
      const reply = await call('GET', `/schemas/ids/${id}`);
      if (reply.status === 404) throw unknownSchemaId(id);
      if (reply.status !== 200) throw refusal(reply, `schema ${id}`);
      return {
        id,
        format: formatOf(reply.body.schemaType),
        schema: String(reply.body.schema),
        ...referencesIn(reply.body),
      };
    },
    getLatest: (subject) => version(subject, 'latest'),
    getVersion: (subject, v) => version(subject, v),
    async subjects() {
      const reply = await call('GET', '/subjects');
      if (reply.status !== 200 || !Array.isArray(reply.raw)) throw refusal(reply, 'list subjects');
      return (reply.raw as unknown[]).map(String).sort();
    },
    async versions(subject) {
      const reply = await call('GET', `${subjectPath(subject)}/versions`);
      if (reply.status === 404) return [];
      if (reply.status !== 200 || !Array.isArray(reply.raw)) throw refusal(reply, `versions of ${subject}`);
      return (reply.raw as unknown[]).map(Number).sort((a, b) => a - b);
    },
    async setCompatibility(subject, level) {
      if (!isCompatibilityLevel(level)) throw invalidOptions('level', `\`${String(level)}\` is not a level`);
      const path = subject === null ? '/config' : `/config/${encodeURIComponent(requireSubject(subject))}`;
      const reply = await call('PUT', path, { compatibility: level });
      if (reply.status !== 200) throw refusal(reply, `set the compatibility of ${subject ?? 'the registry'}`);
    },
    async getCompatibility(subject) {
      let reply: Reply | undefined;
      if (subject !== null) {
        reply = await call('GET', `/config/${encodeURIComponent(requireSubject(subject))}?defaultToGlobal=true`);
        if (reply.status === 404) reply = undefined;
      }
      reply ??= await call('GET', '/config');
      if (reply.status !== 200) throw refusal(reply, `compatibility of ${subject ?? 'the registry'}`);
      const level = reply.body.compatibilityLevel ?? reply.body.compatibility;
      if (!isCompatibilityLevel(level)) throw refusal(reply, `unknown compatibility level ${String(level)}`);
      return level as CompatibilityLevel;
    },
  };
  return options.cache === false ? registry : withCache(registry);
}
