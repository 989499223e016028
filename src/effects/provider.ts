import { EffectivelyError, type EffectivelyErrorOptions, ErrorCodes } from '../errors.ts';

/** An effect as the sender hands it to the provider. */
export interface PendingEffect {
  /** The effect's id: also the idempotency key of every call for it. */
  id: string;
  key: string;
  kind: string;
  payload: unknown;
  /** Calls started for it, this one included. */
  attempts: number;
  /** An earlier call may have reached the provider (it timed out, or its sender died before recording it). */
  inDoubt: boolean;
  createdAt: Date;
}

export interface ProviderCallContext {
  /** Send it as the provider's idempotency key: the same key must never act twice. It is the effect's id. */
  idempotencyKey: string;
  /** Aborted when the call times out (`callTimeoutMs`) or the sender closes. Pass it to `fetch`. */
  signal: AbortSignal;
}

/** What the provider did: `reference` is its own id for it (a message id), kept on the effect. */
export interface ProviderResult {
  reference?: string;
}

/**
 * The port to the outside world: perform `effect`, honouring `idempotencyKey`. Resolve when the provider did it (or had
 * already done it for this key); throw a `ProviderError` to say how it failed (anything else counts as transient).
 */
export type EffectProvider = (effect: PendingEffect, context: ProviderCallContext) => Promise<ProviderResult | void>;

/**
 * Optional: asks the provider whether it already did `effect` (by idempotency key). Called before a call whose earlier
 * attempt is in doubt: a result settles the effect without calling again; `undefined` means "never seen it".
 */
export type EffectLookup = (effect: PendingEffect, context: ProviderCallContext) => Promise<ProviderResult | undefined>;

/**
 * How a call failed. `transient`: may pass later (5xx, 429, a refused connection). `permanent`: never will (a 4xx,
 * a bad address): the effect is dead at once. `timeout`: the outcome is unknown; retried with the same key.
 */
export type ProviderFailure = 'transient' | 'permanent' | 'timeout';

/** The error code of each failure. */
export const providerCodes = {
  transient: ErrorCodes.EFF_PROVIDER_TRANSIENT,
  permanent: ErrorCodes.EFF_PROVIDER_PERMANENT,
  timeout: ErrorCodes.EFF_PROVIDER_TIMEOUT,
} as const;

export interface ProviderErrorOptions extends Omit<EffectivelyErrorOptions, 'retryable'> {
  /** The provider asked not to be called again before this (a 429's or 503's `Retry-After`). */
  retryAfterMs?: number;
  /**
   * A transient failure after which the provider may have done the work all the same (a connection cut once the
   * request was sent, a gateway's 502 or 504, any 5xx): the effect is marked in doubt, as after a timeout. Default
   * false for `transient` and `permanent`; a `timeout` is always in doubt.
   */
  inDoubt?: boolean;
}

/** Thrown by a provider to classify its failure; the sender retries, waits or gives up accordingly. */
export class ProviderError extends EffectivelyError {
  readonly failure: ProviderFailure;
  readonly retryAfterMs: number | undefined;
  readonly inDoubt: boolean;

  constructor(failure: ProviderFailure, message: string, options: ProviderErrorOptions = {}) {
    const { retryAfterMs, inDoubt, ...rest } = options;
    super(providerCodes[failure], message, { ...rest, retryable: failure !== 'permanent' });
    this.name = 'ProviderError';
    this.failure = failure;
    this.retryAfterMs = retryAfterMs;
    this.inDoubt = failure === 'timeout' || inDoubt === true;
  }
}

/** How the sender reads any error a call threw: a `ProviderError` as it says; a non-retryable library error as
 * permanent; anything else as transient, and in doubt (we cannot tell whether the provider acted). */
export function classify(error: unknown): { failure: ProviderFailure; inDoubt: boolean; retryAfterMs?: number } {
  if (error instanceof ProviderError) {
    const { inDoubt } = error;
    return error.retryAfterMs === undefined
      ? { failure: error.failure, inDoubt }
      : { failure: error.failure, inDoubt, retryAfterMs: error.retryAfterMs };
  }
  if (error instanceof EffectivelyError && !error.retryable) return { failure: 'permanent', inDoubt: false };
  return { failure: 'transient', inDoubt: true };
}
