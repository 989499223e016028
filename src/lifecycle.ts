export interface CloseOptions {
  /** How long to wait for in-flight work before giving up on it (default 10 s). */
  timeoutMs?: number;
}

/** Waits for `work`, but no longer than `timeoutMs`; reports whether it finished in time. */
export async function within(work: Promise<unknown>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
