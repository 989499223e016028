/**
 * Named points between the steps whose order makes the guarantees. Tests and the chaos run stop a process at one of
 * them (a real SIGKILL) to prove nothing is lost or applied twice. Production code passes no injector.
 */
export type FaultPoint =
  /** The relay's broker acknowledged the batch; its outbox rows are not yet deleted. */
  | 'relay:after-publish'
  /** The consumer's handler ran for the batch; the database transaction is not yet committed. */
  | 'consumer:before-db-commit'
  /** The consumer's database transaction committed; the offsets are not yet committed to the broker. */
  | 'consumer:after-db-commit'
  /** A parked record failed in the key-order drain: its transaction rolled back, it is not yet given up on. */
  | 'drain:after-rollback'
  /** A redrive chunk was acknowledged by the broker; its dead letters are not yet marked redriven. */
  | 'redrive:after-send';

export type FaultInjector = (point: FaultPoint) => void | Promise<void>;
