// The order service's saga step: inventory refused an order's seats (sold out, or no such show), so the order it
// confirmed is cancelled with that reason, in the consumer's transaction and through the same code as a customer's cancel. The
// OrderCancelled it emits is what compensates: payment refunds the charge, notification sends the cancellation.
import { type Event, isUuid, type Outbox, PermanentError, type Queryable } from 'effectively';
import { type SeatsRefused, SeatsRefusedType } from '../shared/events.ts';
import { cancelIn } from './orders.ts';

/** A refusal the service cannot act on is permanent: the consumer keeps it as a dead letter and goes on. */
function checkRefusal(data: unknown): SeatsRefused {
  const { orderId } = (data ?? {}) as Record<string, unknown>;
  if (typeof orderId !== 'string' || !isUuid(orderId)) throw new PermanentError('not a refusal: needs orderId (UUID)');
  return data as SeatsRefused;
}

/** The handler of `boxoffice.seats`: SeatsRefused cancels its order; held and released seats concern others. */
export function refusalHandler(schema: string, outbox: Outbox) {
  return async (event: Event, { tx }: { tx: Queryable }): Promise<void> => {
    if (event.type !== SeatsRefusedType) return;
    const { orderId, reason } = checkRefusal(event.data);
    const order = await cancelIn(tx, schema, outbox, orderId, reason === 'no-such-show' ? reason : 'sold-out');
    if (!order) throw new PermanentError(`seats refused for order ${orderId}, which this service never made`);
  };
}
