// What POST /orders accepts. A bad request is answered 4xx with the reason, never 500.
import { createHash } from 'node:crypto';
import type { Customer } from '../shared/events.ts';

export interface OrderRequest {
  showId: string;
  seats: number;
  customer: Customer;
  amountCents: number;
}

/** A refusal the client can act on: the HTTP status and why. */
export class BadRequest extends Error {
  constructor(
    readonly status: 400 | 404 | 409 | 413 | 415 | 422,
    message: string,
  ) {
    super(message);
  }
}

const text = (value: unknown, field: string, max: number): string => {
  if (typeof value !== 'string' || value.trim() === '' || value.length > max)
    throw new BadRequest(400, `${field} must be a non-empty string of at most ${max} characters`);
  return value;
};

const integer = (value: unknown, field: string, min: number, max: number): number => {
  if (!Number.isSafeInteger(value) || (value as number) < min || (value as number) > max)
    throw new BadRequest(400, `${field} must be an integer in ${min}..${max}`);
  return value as number;
};

/** Checks a parsed JSON body and keeps only the fields of an order. */
export function parseOrderRequest(body: unknown): OrderRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new BadRequest(400, 'the body must be a JSON object');
  const { showId, seats, customer, amountCents } = body as Record<string, unknown>;
  if (typeof customer !== 'object' || customer === null) throw new BadRequest(400, 'customer must be an object');
  const { name, email } = customer as Record<string, unknown>;
  const address = text(email, 'customer.email', 254);
  if (!/^[^@\s]+@[^@\s]+$/.test(address)) throw new BadRequest(400, 'customer.email must be an e-mail address');
  return {
    showId: text(showId, 'showId', 100),
    seats: integer(seats, 'seats', 1, 10),
    customer: { name: text(name, 'customer.name', 200), email: address },
    amountCents: integer(amountCents, 'amountCents', 0, 100_000_000),
  };
}

/** The fingerprint kept with an Idempotency-Key: the same key with another body is refused (422). */
export function requestHash(request: OrderRequest): string {
  const { showId, seats, customer, amountCents } = request;
  const canonical = JSON.stringify([showId, seats, customer.name, customer.email, amountCents]);
  return createHash('sha256').update(canonical).digest('hex');
}
