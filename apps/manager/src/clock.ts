/**
 * The daemon's time: `now()` in seconds (epoch seconds on a real cluster, simulated seconds
 * against the simulator) and an abortable `sleep` between rounds. Against the simulator the
 * sleep advances the simulation instead of waiting (time accelerated).
 */
export interface Clock {
  now(): number;
  /** Resolves after `seconds`, or at once when `signal` aborts (never rejects). */
  sleep(seconds: number, signal: AbortSignal): Promise<void>;
}

/** Wall-clock time. */
export const systemClock: Clock = {
  now: () => Date.now() / 1000,
  sleep: (seconds, signal) =>
    new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const timer = setTimeout(done, seconds * 1000);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    }),
};
