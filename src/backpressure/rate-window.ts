/**
 * The most events seen in any window of `windowMs`, over sorted event times (a sliding window: every event's time is
 * tried as a window's start). How a rate limit is checked against what a provider actually received.
 */
export function maxPerWindow(times: readonly number[], windowMs = 1000): number {
  let most = 0;
  let first = 0;
  for (let last = 0; last < times.length; last++) {
    while (times[last]! - times[first]! >= windowMs) first += 1;
    most = Math.max(most, last - first + 1);
  }
  return most;
}
