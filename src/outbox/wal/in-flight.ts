// The WAL relay's sends in flight and the keys they carry. A batch may go out while earlier ones wait for the broker
// (one batch's acknowledgement no longer delays the next), but never beside a send holding one of its keys: a row
// refused there is set aside and holds its key's later rows back, which a send already made could not honour.

export function sendsInFlight() {
  const keys = new Set<string>();
  const sends = new Set<Promise<unknown>>();
  let failed = false;
  return {
    /** Whether one of these rows' keys is in a send not yet answered. */
    overlaps(rows: readonly { key: string }[]): boolean {
      if (keys.size === 0) return false;
      for (const row of rows) if (keys.has(row.key)) return true;
      return false;
    },
    /** Notes a send of these rows until it is answered (either way); returns it. */
    track<T>(rows: readonly { key: string }[], send: Promise<T>): Promise<T> {
      const own: string[] = [];
      for (const row of rows) {
        if (keys.has(row.key)) continue;
        keys.add(row.key);
        own.push(row.key);
      }
      const answered = send.then(
        () => undefined,
        () => {
          failed = true;
        },
      );
      sends.add(answered);
      void answered.then(() => {
        sends.delete(answered);
        for (const key of own) keys.delete(key);
      });
      return send;
    },
    /** Resolves once every send made so far is answered. */
    async idle(): Promise<void> {
      while (sends.size > 0) await Promise.all(sends);
    },
    /**
     * Whether a send failed. Known as soon as it is answered, before its batch's turn to settle: a later send of its
     * key would put that row on the topic ahead of the failed one, which the next session sends again.
     */
    failed: () => failed,
    /** How many sends wait for the broker. */
    size: () => sends.size,
  };
}
