import { writeSync } from 'node:fs';

/**
 * A child's crash switch. `CHAOS_CRASH_AT=<point>` arms it from the start; SIGUSR2 arms it later with the point named in
 * `CHAOS_ARM_POINTS` (comma-separated, picked at random). When an armed point is reached, the process SIGKILLs itself:
 * a real kill, at that exact hop, with no cleanup.
 */
export function crashSwitch(): (point: string) => void {
  let armed = new Set<string>((process.env.CHAOS_CRASH_AT ?? '').split(',').filter(Boolean));
  const armable = (process.env.CHAOS_ARM_POINTS ?? '').split(',').filter(Boolean);
  process.on('SIGUSR2', () => {
    const point = armable[Math.floor(Math.random() * armable.length)];
    if (point) armed = new Set([point]);
  });
  return (point: string) => {
    if (!armed.has(point)) return;
    // Said synchronously, so the parent knows at which hop this process died.
    writeSync(2, `chaos-crash-at:${point}\n`);
    process.kill(process.pid, 'SIGKILL');
  };
}

/** Tells the parent this process is up (its crash switch listens): only then may it be armed with SIGUSR2. */
export function announceReady(): void {
  writeSync(1, 'chaos-ready\n');
}
