// An application's callback reports work the library has already recorded (rows published and deleted, an outcome
// written, an alert raised, a breaker moved). Its failure is its own: thrown into the library, it read as a failed pass,
// an outcome "not recorded", a failed check repeated every interval, or a breaker move cut short (the call's outcome
// then never recorded, the listeners after it never told).
import { errorFields, type Logger } from './logger.ts';

function failed(logger: Logger, name: string, error: unknown, fields: Record<string, unknown>): void {
  logger.error(`${name} callback failed; what it reports stands`, { callback: name, ...fields, ...errorFields(error) });
}

/**
 * Calls `callback` (when given) with `args`. A throw, or a returned promise that rejects, is logged as the callback's
 * failure (`<name> callback failed`, with `fields`) and goes no further.
 */
export function callBack<A extends unknown[]>(
  logger: Logger,
  name: string,
  callback: ((...args: A) => unknown) | undefined,
  args: A,
  fields: Record<string, unknown> = {},
): void {
  if (!callback) return;
  try {
    const result = callback(...args);
    if (result instanceof Promise) result.catch((error: unknown) => failed(logger, name, error, fields));
  } catch (error) {
    failed(logger, name, error, fields);
  }
}

/** As `callBack`, for a callback whose promise the caller waits for (a progress report that writes somewhere). */
export async function awaitCallBack<A extends unknown[]>(
  logger: Logger,
  name: string,
  callback: ((...args: A) => unknown) | undefined,
  args: A,
  fields: Record<string, unknown> = {},
): Promise<void> {
  if (!callback) return;
  try {
    await callback(...args);
  } catch (error) {
    failed(logger, name, error, fields);
  }
}
