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

/**
 * Tells the parent (on stdout, synchronously) that this process reached a milestone: `loaded` (its code is loaded),
 * `ready` (it is up and its crash switch listens: only then may it be armed with SIGUSR2), `applied` (its first event
 * applied or published: the parent measures a kill's recovery up to it).
 */
export function announce(milestone: 'loaded' | 'ready' | 'applied' | 'progress'): void {
  writeSync(1, `chaos-${milestone}\n`);
}

export const announceReady = (): void => announce('ready');

/**
 * `applied`, said once: the first event this process applied or published; then `progress`, at most every 100 ms
 * (after a network fault the parent measures the time to the role's next progress).
 */
export function firstApplied(): () => void {
  let said = false;
  let last = 0;
  return () => {
    if (!said) {
      said = true;
      announce('applied');
    }
    if (Date.now() - last < 100) return;
    last = Date.now();
    announce('progress');
  };
}
