// The providers' side of the audit: what the e-mail provider sent and what the payment provider charged and refunded
// (their own logs), against what the order service's table says should have happened: one confirmation e-mail and
// one charge per order, one cancellation e-mail and one refund per cancelled order. Every customer of the load has
// an address of their own, so (address, subject) names one (order, kind).
import type { EmailProvider } from '../../examples/email-provider/server.ts';
import type { PaymentProvider } from '../../examples/payment-provider/server.ts';
import type { Queryable } from '../../src/db/port.ts';

export interface ProviderAudit {
  emails: number;
  charges: number;
  refunds: number;
  /** Sends, charges and refunds beyond one per (order, kind). */
  duplicates: number;
  /** Expected ones that never happened. */
  lost: number;
}

const subjects = { confirmed: 'Your tickets', cancelled: 'Your order is cancelled' };

function excess(keys: string[], expected: Set<string>): { duplicates: number; lost: number } {
  const seen = new Map<string, number>();
  for (const key of keys) seen.set(key, (seen.get(key) ?? 0) + 1);
  let duplicates = 0;
  for (const [key, n] of seen) duplicates += expected.has(key) ? n - 1 : n;
  let lost = 0;
  for (const key of expected) if (!seen.has(key)) lost++;
  return { duplicates, lost };
}

export async function auditProviders(
  db: Queryable,
  schema: string,
  email: EmailProvider,
  payment: PaymentProvider,
): Promise<ProviderAudit> {
  const { rows } = await db.query<{ id: string; customer_email: string; status: string }>(
    `SELECT id, customer_email, status FROM ${schema}.orders`,
  );
  const mails = new Set<string>();
  const charged = new Set<string>();
  const refunded = new Set<string>();
  for (const order of rows) {
    mails.add(`${order.customer_email} ${subjects.confirmed}`);
    charged.add(order.id);
    if (order.status === 'cancelled') {
      mails.add(`${order.customer_email} ${subjects.cancelled}`);
      refunded.add(order.id);
    }
  }
  const parts = [
    excess(
      email.sent.map((sent) => `${sent.to} ${sent.subject}`),
      mails,
    ),
    excess(
      payment.charges.map((charge) => charge.orderId),
      charged,
    ),
    excess(
      payment.refunds.map((refund) => refund.orderId),
      refunded,
    ),
  ];
  return {
    emails: email.sent.length,
    charges: payment.charges.length,
    refunds: payment.refunds.length,
    duplicates: parts.reduce((sum, part) => sum + part.duplicates, 0),
    lost: parts.reduce((sum, part) => sum + part.lost, 0),
  };
}
