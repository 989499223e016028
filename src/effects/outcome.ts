import { classify, ProviderError, type ProviderFailure, type ProviderResult, providerCodes } from './provider.ts';

/** What one call came to, as the sender records it. */
export type Outcome =
  | { ok: true; result: ProviderResult }
  | {
      ok: false;
      failure: ProviderFailure;
      /** The call may have reached the provider. */
      inDoubt: boolean;
      code: string;
      retryAfterMs?: number;
      error: unknown;
    };

/** Reads a failed call. Aborted by the sender (its timeout, or close): a timeout, whatever the provider threw. */
export function outcomeOf(error: unknown, signal: AbortSignal): Outcome {
  if (signal.aborted) {
    const reason = signal.reason instanceof Error ? signal.reason.message : 'aborted';
    return {
      ok: false,
      failure: 'timeout',
      inDoubt: true,
      code: providerCodes.timeout,
      error: new ProviderError('timeout', reason, { cause: error }),
    };
  }
  const { failure, inDoubt, retryAfterMs } = classify(error);
  const base = { ok: false as const, failure, inDoubt, code: providerCodes[failure], error };
  return retryAfterMs === undefined ? base : { ...base, retryAfterMs };
}

/**
 * Whether the provider may still be working on the failed call: it is in doubt and no answer ended it (a timeout, a
 * connection cut, a gateway's 504 whose upstream may still run). An answered 5xx is in doubt (the work may have been
 * done) but over: its retry need not wait a whole call time.
 */
export function mayStillRun(outcome: Extract<Outcome, { ok: false }>): boolean {
  if (!outcome.inDoubt) return false;
  const status = outcome.error instanceof ProviderError ? outcome.error.details?.status : undefined;
  return typeof status !== 'number' || status === 504;
}

/** `work`, or a rejection as soon as `signal` aborts (a provider that ignores its signal still times out). */
export function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export function reasonOf(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
