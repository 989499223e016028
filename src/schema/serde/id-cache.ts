/**
 * The serde's memory of schema ids: readers built for ids the registry gave, and refusals of ids it did not know or
 * would not give. Bounded (least recently used first out: records with random ids must not grow it) and a refusal
 * expires (a lagging registry replica, or a proxy's passing 401/403/404, must not dead-letter that id until restart).
 * A retryable failure (the registry is down) is not remembered at all.
 */
export interface IdCacheOptions {
  maxEntries: number;
  refusedTtlMs: number;
  now: () => number;
}

interface Entry<V> {
  value: Promise<V>;
  /** When a refusal stops counting (Infinity for a value, or while the answer is pending). */
  expiresAt: number;
}

export function idCache<V>(options: IdCacheOptions) {
  const entries = new Map<number, Entry<V>>();
  return {
    get(id: number, load: () => Promise<V>): Promise<V> {
      const found = entries.get(id);
      if (found !== undefined) {
        entries.delete(id);
        if (found.expiresAt > options.now()) {
          entries.set(id, found); // most recently used
          return found.value;
        }
      }
      const entry: Entry<V> = { value: load(), expiresAt: Number.POSITIVE_INFINITY };
      entries.set(id, entry);
      while (entries.size > options.maxEntries) entries.delete(entries.keys().next().value as number);
      entry.value.catch((error: unknown) => {
        if (entries.get(id) !== entry) return;
        if ((error as { retryable?: unknown })?.retryable === false)
          entry.expiresAt = options.now() + options.refusedTtlMs;
        else entries.delete(id);
      });
      return entry.value;
    },
    get size() {
      return entries.size;
    },
  };
}
