// The console's JSON API: what the page reads (health, failure groups, letters, jobs, audit) and the actions an
// operator takes (redrive jobs, cancel, discard). Every value goes out as JSON text; the page renders it as text.
import type { Db } from '../db/port.ts';
import { type DeadLetterStatus, deadLetterStore } from '../deadletter/store.ts';
import type { AuditLog } from './audit.ts';
import { failureGroups, type GroupBy, groupings } from './failure-groups.ts';
import { HttpError, type Route } from './http.ts';
import type { RedriveJobs } from './jobs.ts';
import { type LetterQuery, letterReader, letterSummary } from './letters.ts';

const statuses = new Set<DeadLetterStatus>(['dead', 'redriven', 'discarded']);

function text(url: URL, name: string): string | undefined {
  const value = url.searchParams.get(name)?.trim();
  return value ? value : undefined;
}

function status(url: URL): DeadLetterStatus {
  const value = text(url, 'status') ?? 'dead';
  if (!statuses.has(value as DeadLetterStatus)) throw new HttpError(400, 'status: dead, redriven or discarded');
  return value as DeadLetterStatus;
}

function ids(body: unknown): string[] {
  const list = (body as { ids?: unknown }).ids;
  if (
    !Array.isArray(list) ||
    list.length === 0 ||
    list.length > 100_000 ||
    !list.every((id) => /^\d{1,18}$/.test(String(id)))
  )
    throw new HttpError(400, 'ids: a non-empty list of dead-letter ids');
  return list.map(String);
}

export interface ApiParts {
  db: Db;
  schema: string;
  readOnly: boolean;
  health: () => Promise<unknown>;
  jobs: RedriveJobs;
  audit: AuditLog;
  csrfFor: (user: { name: string; role: 'reader' | 'operator' }) => string;
}

/** The console's routes (see docs/console.md for each). */
export function apiRoutes(parts: ApiParts): Route[] {
  const letters = letterReader(parts.db, parts.schema);
  const store = deadLetterStore({ schema: parts.schema });
  const query = (url: URL): LetterQuery => ({
    status: status(url),
    ...(text(url, 'consumer') ? { consumer: text(url, 'consumer')! } : {}),
    ...(text(url, 'topic') ? { topic: text(url, 'topic')! } : {}),
    ...(text(url, 'code') ? { code: text(url, 'code')! } : {}),
    ...(text(url, 'q') ? { search: text(url, 'q')! } : {}),
    ...(text(url, 'fingerprint') ? { fingerprint: text(url, 'fingerprint')! } : {}),
    limit: Math.max(1, Math.min(Number(text(url, 'limit') ?? 200) || 200, 5000)),
  });
  return [
    {
      method: 'GET',
      path: '/api/session',
      role: 'reader',
      handle: ({ user }) => ({
        json: { user: user.name, role: user.role, readOnly: parts.readOnly, csrf: parts.csrfFor(user) },
      }),
    },
    { method: 'GET', path: '/api/health', role: 'reader', handle: async () => ({ json: await parts.health() }) },
    {
      method: 'GET',
      path: '/api/failures',
      role: 'reader',
      handle: async ({ url }) => {
        const by = (text(url, 'by') ?? 'cause') as GroupBy;
        if (!groupings.includes(by)) throw new HttpError(400, `by: one of ${groupings.join(', ')}`);
        const found = await letters.find({ ...query(url), limit: 5000 });
        return { json: { by, letters: found.length, groups: failureGroups(found, by) } };
      },
    },
    {
      method: 'GET',
      path: '/api/letters',
      role: 'reader',
      handle: async ({ url }) => ({ json: (await letters.find(query(url))).map(letterSummary) }),
    },
    {
      method: 'GET',
      path: '/api/letters/:id',
      role: 'reader',
      handle: async ({ params }) => {
        const letter = await letters.detail(params.id!);
        if (!letter) throw new HttpError(404, `no dead letter ${params.id}`);
        return { json: letter };
      },
    },
    {
      method: 'POST',
      path: '/api/letters/discard',
      role: 'operator',
      action: true,
      handle: async ({ body, user }) => {
        const chosen = ids(body);
        const discarded = await store.discard(parts.db, chosen);
        await parts.audit.record(user, {
          action: 'discard',
          target: `${chosen.length} letters`,
          outcome: 'done',
          details: { ids: chosen, discarded },
        });
        return { json: { discarded } };
      },
    },
    {
      method: 'GET',
      path: '/api/jobs',
      role: 'reader',
      handle: async () => ({
        json: { jobs: parts.jobs.list(), history: await parts.audit.list(100, 'redrive') },
      }),
    },
    {
      method: 'GET',
      path: '/api/jobs/:id',
      role: 'reader',
      handle: ({ params }) => {
        const job = parts.jobs.get(Number(params.id));
        if (!job) throw new HttpError(404, `no job ${params.id} in this console's life`);
        return { json: job };
      },
    },
    {
      method: 'POST',
      path: '/api/jobs',
      role: 'operator',
      action: true,
      handle: async ({ body, user }) => {
        const request = body as Record<string, unknown>;
        const transport = request.transport;
        if (transport !== undefined && transport !== 'kafka' && transport !== 'postgres')
          throw new HttpError(400, 'transport: kafka or postgres');
        const rate =
          request.ratePerSecond === undefined || request.ratePerSecond === null
            ? undefined
            : Number(request.ratePerSecond);
        if (rate !== undefined && !(rate >= 1 && rate <= 100_000))
          throw new HttpError(400, 'ratePerSecond: 1 to 100000');
        const job = await parts.jobs.start(
          {
            ids: ids(body),
            dryRun: request.dryRun === true,
            transport,
            ratePerSecond: rate,
            force: request.force === true,
            label: typeof request.label === 'string' ? request.label.slice(0, 200) : undefined,
          },
          user,
        );
        return { status: 202, json: job };
      },
    },
    {
      method: 'POST',
      path: '/api/jobs/:id/cancel',
      role: 'operator',
      action: true,
      handle: async ({ params, user }) => {
        const cancelled = await parts.jobs.cancel(Number(params.id), user);
        if (!cancelled) throw new HttpError(409, `job ${params.id} is not running`);
        return { json: { cancelled } };
      },
    },
    {
      method: 'GET',
      path: '/api/audit',
      role: 'reader',
      handle: async () => ({ json: await parts.audit.list(200) }),
    },
  ];
}
