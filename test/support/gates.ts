/** A gate per partition: a batch of that partition waits until the test opens it. */
export function gates() {
  const open = new Map<number, () => void>();
  const waits = new Map<number, Promise<void>>();
  const of = (partition: number) => {
    if (!waits.has(partition)) waits.set(partition, new Promise<void>((resolve) => open.set(partition, resolve)));
    return waits.get(partition)!;
  };
  const openGate = (partition: number) => {
    void of(partition);
    open.get(partition)!();
  };
  return { wait: of, open: openGate };
}

/** A one-shot signal: `fired` resolves once `fire()` was called. */
export function signal() {
  let fire!: () => void;
  const fired = new Promise<void>((resolve) => {
    fire = resolve;
  });
  return { fire, fired };
}
