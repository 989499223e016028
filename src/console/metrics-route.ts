// The console's `/metrics`: the library's Prometheus text (`prometheusMetrics`), for a scraper with the reader's token
// (or for anyone, when the console is told `metrics: 'public'`).
import type { Queryable } from '../db/port.ts';
import type { Logger } from '../observability/logger.ts';
import { metricsHandler } from '../observability/prometheus.ts';
import type { ConsoleRole } from './auth.ts';
import type { Route } from './http.ts';

export function metricsRoute(options: {
  db: Queryable;
  schema: string;
  logger: Logger;
  role: ConsoleRole | 'public';
}): Route {
  const handler = metricsHandler(options.db, { schema: options.schema, logger: options.logger });
  return {
    method: 'GET',
    path: '/metrics',
    role: options.role,
    handle: async ({ request, response }) => {
      await handler(request, response);
      return undefined;
    },
  };
}
