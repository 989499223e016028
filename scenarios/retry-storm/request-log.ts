// The provider's own request log: the time of every POST /emails its HTTP server received, taken where the server
// takes the request (node:http's `http.server.request.start` diagnostics channel), not where a client sent it.
import diagnostics from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';

export interface RequestLog {
  /** Arrival times (ms since epoch, ascending) of the requests to POST /emails on the provider's port. */
  readonly times: readonly number[];
  stop(): void;
}

/**
 * Starts recording the requests that reach the HTTP server listening on `url`'s port, in this process; `onRequest`
 * (default none) hears of each as it arrives.
 */
export function recordRequests(url: string, onRequest?: (at: number) => void): RequestLog {
  const port = Number(new URL(url).port);
  const times: number[] = [];
  const listener = (message: unknown) => {
    const { request } = message as { request: IncomingMessage };
    if (request.socket.localPort !== port || request.method !== 'POST') return;
    if (new URL(request.url ?? '/', 'http://provider').pathname !== '/emails') return;
    const at = Date.now();
    times.push(at);
    onRequest?.(at);
  };
  diagnostics.subscribe('http.server.request.start', listener);
  return {
    times,
    stop: () => diagnostics.unsubscribe('http.server.request.start', listener),
  };
}
