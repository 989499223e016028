// The boxoffice's events: what the order service and the inventory service tell the others.

/** Order events, key = orderId. */
export const ordersTopic = 'boxoffice.orders';
/** Seat events, key = showId. */
export const seatsTopic = 'boxoffice.seats';

export const OrderConfirmedType = 'boxoffice.OrderConfirmed';
export const OrderCancelledType = 'boxoffice.OrderCancelled';
export const SeatsHeldType = 'boxoffice.SeatsHeld';
export const SeatsReleasedType = 'boxoffice.SeatsReleased';
export const SeatsRefusedType = 'boxoffice.SeatsRefused';

export interface Customer {
  name: string;
  email: string;
}

/** An order was placed and confirmed (event version 1 of its order). */
export interface OrderConfirmed {
  orderId: string;
  showId: string;
  seats: number;
  customer: Customer;
  amountCents: number;
  version: 1;
}

/**
 * Why an order was cancelled: its customer asked (`POST /orders/:id/cancel`), or inventory refused its seats (sold
 * out, or a show it does not sell: the order API cannot know the shows, inventory owns them).
 */
export type CancelReason = 'customer' | RefusalReason;

/** Why inventory refused an order's seats. */
export type RefusalReason = 'sold-out' | 'no-such-show';

/** A confirmed order was cancelled (event version 2 of its order). */
export interface OrderCancelled {
  orderId: string;
  showId: string;
  seats: number;
  amountCents: number;
  reason: CancelReason;
  version: 2;
}

export type OrderEvent = OrderConfirmed | OrderCancelled;

/**
 * Seats held for an order, released after its cancellation, or refused (sold out, or no such show: the order service
 * cancels the order). `version` is the show's inventory version: it grows with every change of the show's seats, so a reader
 * keeps the newest `seatsLeft` whatever order these arrive in. A refusal changes nothing: it carries the show's
 * current `seatsLeft` and `version`.
 */
export interface SeatsChanged {
  showId: string;
  orderId: string;
  seats: number;
  seatsLeft: number;
  version: number;
}

export type SeatsHeld = SeatsChanged;
export type SeatsReleased = SeatsChanged;
/** For a show inventory does not sell: `seatsLeft` 0 and `version` 0, and `reason` says so (absent: sold out). */
export type SeatsRefused = SeatsChanged & { reason?: RefusalReason };
