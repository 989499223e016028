/**
 * Serves a `SchemaRegistry` (typically the embedded `postgresSchemaRegistry`) over the subset of Confluent's Schema
 * Registry REST API that serializers use, with node:http: any Confluent-compatible client (ours, Confluent's, a
 * Kafka Connect converter) can then point at the embedded registry. Bound to loopback by default and answering only
 * to loopback Host names; `token` adds a bearer token (required to bind elsewhere). Hostile requests (bad paths, foreign
 * Host, wrong content type, large bodies, slow clients) get an HTTP error: nothing a client sends may throw outside a
 * request's promise, because this process usually also hosts the consumer and the relay.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EffectivelyError, ErrorCodes, invalidOptions } from '../../errors.ts';
import { formatOf, referencesOf, schemaTypeOf } from './canonical.ts';
import { checkRequest, defaultAllowedHosts, HttpError, isLoopback, pathSegments } from './http-guard.ts';
import type { SchemaRegistry, StoredSchema, SubjectVersion } from './port.ts';

export interface SchemaRegistryServerOptions {
  /** Port to listen on (default 0: any free port; read it from `url`). */
  port?: number;
  /** Address to bind (default `127.0.0.1`). */
  host?: string;
  /** Largest request body accepted (default 1 MiB). */
  maxBodyBytes?: number;
  /**
   * Bearer token every request must carry (`authorization: Bearer <token>`; give the client
   * `headers: { authorization: 'Bearer <token>' }`). Default none; required when `host` is not a loopback address.
   */
  token?: string;
  /**
   * Host names accepted in the Host header, besides the loopback names (default: loopback names and `host`; with a
   * token on a non-loopback address, any). Refusing other names stops DNS-rebinding pages in a browser.
   */
  allowedHosts?: string[];
  /** How long one request may take, from its first byte to the answer, before it gets a 503 (default 30,000 ms). */
  requestTimeoutMs?: number;
}

export interface SchemaRegistryServer {
  /** Base URL of the API, e.g. `http://127.0.0.1:41234`: give it to `httpSchemaRegistry({ url })`. */
  readonly url: string;
  close(): Promise<void>;
}

const mediaType = 'application/vnd.schemaregistry.v1+json';

/** Our coded errors as the registry API's status and `error_code`. */
function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (!(error instanceof EffectivelyError)) return new HttpError(500, 50001, (error as Error)?.message ?? 'error');
  switch (error.code) {
    case ErrorCodes.EFF_SCHEMA_UNKNOWN_ID:
      return new HttpError(404, 40403, error.message);
    case ErrorCodes.EFF_SCHEMA_NOT_FOUND:
      return new HttpError(404, error.details.version === undefined ? 40401 : 40402, error.message);
    case ErrorCodes.EFF_SCHEMA_INCOMPATIBLE:
      return new HttpError(409, 409, error.message, {
        level: error.details.level,
        violations: error.details.violations,
      });
    case ErrorCodes.EFF_SCHEMA_INVALID:
      return new HttpError(422, 42201, error.message);
    case ErrorCodes.EFF_INVALID_OPTIONS:
      return new HttpError(422, error.details.field === 'level' ? 42203 : 42202, error.message);
    default:
      return new HttpError(error.retryable ? 503 : 500, 50001, error.message);
  }
}

async function readJson(request: IncomingMessage, limit: number): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new HttpError(413, 41301, `request body larger than ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  try {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (body !== null && typeof body === 'object' && !Array.isArray(body)) return body;
  } catch {
    // answered below
  }
  throw new HttpError(422, 42201, 'request body must be a JSON object');
}

const schemaFields = (schema: StoredSchema) => ({
  schema: schema.schema,
  ...(schema.format === 'avro' ? {} : { schemaType: schemaTypeOf(schema.format) }),
  ...(schema.references && schema.references.length > 0 ? { references: schema.references } : {}),
});
const versionFields = (v: SubjectVersion) => ({ subject: v.subject, version: v.version, id: v.id, ...schemaFields(v) });

function versionParam(text: string): number | 'latest' {
  if (text === 'latest' || text === '-1') return 'latest';
  const version = Number(text);
  if (!Number.isSafeInteger(version) || version < 1) throw new HttpError(422, 42202, `invalid version \`${text}\``);
  return version;
}

/** One request: the route's answer (a JSON value), or a thrown error. */
async function route(
  registry: SchemaRegistry,
  method: string,
  parts: string[],
  body: () => Promise<Record<string, unknown>>,
): Promise<unknown> {
  // parameters: subjects/:subject/versions/:version, config/:subject, schemas/ids/:id
  const [head, subject, , which] = parts;
  const param = (i: number) => (head === 'schemas' ? i === 2 : i % 2 === 1);
  const key = `${method} ${parts.map((part, i) => (param(i) ? ':' : part)).join('/')}`;
  const schemaOf = async () => {
    const given = await body();
    if (typeof given.schema !== 'string') throw invalidOptions('schema', 'must be the schema as a JSON string');
    return { schema: given.schema, format: formatOf(given.schemaType), references: referencesOf(given.references) };
  };
  switch (key) {
    case 'GET subjects':
      return registry.subjects();
    case 'GET subjects/:/versions': {
      const versions = await registry.versions(subject!);
      if (versions.length === 0) throw new HttpError(404, 40401, `subject \`${subject}\` not found`);
      return versions;
    }
    case 'POST subjects/:/versions': {
      const { schema, format, references } = await schemaOf();
      return { id: await registry.register(subject!, schema, format, references) };
    }
    case 'POST subjects/:': {
      const { schema, format, references } = await schemaOf();
      const found = await registry.lookup(subject!, schema, format, references);
      if (!found) throw new HttpError(404, 40403, `subject \`${subject}\` has no such schema`);
      return versionFields(found);
    }
    case 'GET subjects/:/versions/:': {
      const version = versionParam(which!);
      return versionFields(
        version === 'latest' ? await registry.getLatest(subject!) : await registry.getVersion(subject!, version),
      );
    }
    case 'GET schemas/ids/:': {
      const id = Number(parts[2]);
      if (!Number.isSafeInteger(id)) throw new HttpError(404, 40403, `schema \`${parts[2]}\` not found`);
      return schemaFields(await registry.getById(id));
    }
    case 'GET config':
    case 'GET config/:':
      return { compatibilityLevel: await registry.getCompatibility(subject ?? null) };
    case 'PUT config':
    case 'PUT config/:': {
      const level = (await body()).compatibility;
      await registry.setCompatibility(subject ?? null, level as never);
      return { compatibility: level };
    }
  }
  throw new HttpError(404, 404, `no route for ${method} /${parts.join('/')}`);
}

function validate(options: SchemaRegistryServerOptions): void {
  const positive = (field: keyof SchemaRegistryServerOptions, value: unknown) => {
    if (value !== undefined && !(Number.isSafeInteger(value) && (value as number) > 0)) {
      throw invalidOptions(field, 'must be a positive integer');
    }
  };
  positive('maxBodyBytes', options.maxBodyBytes);
  positive('requestTimeoutMs', options.requestTimeoutMs);
  if (options.port !== undefined && !(Number.isSafeInteger(options.port) && options.port >= 0 && options.port < 65536))
    throw invalidOptions('port', 'must be an integer from 0 to 65535');
  if (options.token !== undefined && (typeof options.token !== 'string' || options.token.length === 0))
    throw invalidOptions('token', 'must be a non-empty string');
  if (options.allowedHosts !== undefined && !options.allowedHosts.every((h) => typeof h === 'string' && h.length > 0))
    throw invalidOptions('allowedHosts', 'must be a list of host names');
  if (!isLoopback(options.host ?? '127.0.0.1') && options.token === undefined)
    throw invalidOptions('token', 'is required to bind the registry server to a non-loopback address');
}

/** Starts an HTTP server for `registry`; resolves once it listens. */
export async function serveSchemaRegistry(
  registry: SchemaRegistry,
  options: SchemaRegistryServerOptions = {},
): Promise<SchemaRegistryServer> {
  validate(options);
  const host = options.host ?? '127.0.0.1';
  const limit = options.maxBodyBytes ?? 1024 * 1024;
  const timeoutMs = options.requestTimeoutMs ?? 30_000;
  const guard = {
    token: options.token,
    allowedHosts: defaultAllowedHosts(host, options.allowedHosts, options.token),
    maxBodyBytes: limit,
  };
  const reply = (response: ServerResponse, status: number, value: unknown) => {
    if (response.headersSent || response.destroyed) return;
    // a refused body is not read: the connection closes after the answer instead of waiting for the rest
    const close = status === 413 || status === 415 ? { connection: 'close' } : {};
    response.writeHead(status, { 'content-type': mediaType, ...close });
    response.end(JSON.stringify(value));
  };
  const handle = async (request: IncomingMessage): Promise<unknown> => {
    checkRequest(request, guard);
    const parts = pathSegments(request.url);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new HttpError(503, 50301, `request took longer than ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([
        route(registry, request.method ?? 'GET', parts, () => readJson(request, limit)),
        late,
      ]);
    } finally {
      clearTimeout(timer);
    }
  };
  const server = createServer((request, response) => {
    // everything, parsing included, inside the promise: nothing a client sends may throw into the event loop
    Promise.resolve()
      .then(() => handle(request))
      .then(
        (value) => reply(response, 200, value),
        (error: unknown) => {
          const failure = toHttpError(error);
          reply(response, failure.status, {
            error_code: failure.errorCode,
            message: failure.message,
            ...failure.extra,
          });
        },
      )
      .catch(() => response.destroy());
  });
  server.requestTimeout = timeoutMs;
  server.headersTimeout = Math.min(timeoutMs, 60_000);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      const { address, port } = server.address() as AddressInfo;
      resolve({
        url: `http://${address.includes(':') ? `[${address}]` : address}:${port}`,
        close: () =>
          new Promise<void>((done, fail) => {
            server.close((error) => (error ? fail(error) : done()));
            server.closeAllConnections();
          }),
      });
    });
  });
}
