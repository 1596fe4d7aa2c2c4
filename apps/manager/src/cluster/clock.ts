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

/** What {@link SimulationClock} drives: the `Simulation` API of `@poise/sim` (`time`, `ended`, `step()`). */
export interface SteppedSimulation {
  readonly time: number;
  readonly ended: boolean;
  step(): boolean;
}

/**
 * The daemon's clock against the embedded simulator: `now()` is the simulated time on an epoch
 * (`epoch + sim.time`), and `sleep(s)` advances the simulation — at least one round (20 s, one
 * HA manager round) and as many as it takes to cover `s` simulated seconds — instead of
 * waiting. With `speed` > 0 each round also takes `round / speed` real seconds (20 s rounds at
 * speed 10: one every 2 s); with 0 it runs as fast as it can, yielding to the event loop
 * between rounds so signals are handled. An aborted sleep returns at once.
 */
export class SimulationClock implements Clock {
  constructor(
    private readonly sim: SteppedSimulation,
    private readonly epoch: number,
    private readonly speed: number,
    private readonly wait: (seconds: number, signal: AbortSignal) => Promise<void> = (seconds, signal) =>
      systemClock.sleep(seconds, signal),
  ) {}

  now(): number {
    return this.epoch + this.sim.time;
  }

  async sleep(seconds: number, signal: AbortSignal): Promise<void> {
    const target = this.sim.time + seconds;
    while (!signal.aborted && !this.sim.ended) {
      const before = this.sim.time;
      this.sim.step();
      if (this.speed > 0) await this.wait((this.sim.time - before) / this.speed, signal);
      else await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.sim.time >= target) return;
    }
  }
}
