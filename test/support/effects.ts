import type { PendingEffect } from '../../src/effects/provider.ts';

/** An e-mail effect as a sender hands it to a provider. */
export const pendingEffect = (payload: unknown, id = `e-${Math.random()}`): PendingEffect => ({
  id,
  key: 'order-1',
  kind: 'email',
  payload,
  attempts: 1,
  inDoubt: false,
  createdAt: new Date(),
});
