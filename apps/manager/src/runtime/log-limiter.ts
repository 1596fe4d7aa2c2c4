import type { LogFields, LogLevel, Logger } from '../log';

/**
 * Lines of one event written per window at most; those beyond are counted and said in one line
 * once the window is over (at the next line, or at {@link RateLimitedLog.flush}), so a flood
 * of bad requests cannot fill the journal.
 */
export class RateLimitedLog {
  private windowStart: number | undefined;
  private written = 0;
  private suppressed = 0;

  constructor(
    private readonly log: Logger,
    private readonly event: string,
    private readonly limit: { readonly lines: number; readonly windowSeconds: number },
    /** Seconds of a monotonic clock (real time: a flood is one of real time, also on the simulator). */
    private readonly now: () => number,
  ) {
    if (!Number.isInteger(limit.lines) || limit.lines < 1)
      throw new RangeError(`lines per window must be a whole number ≥ 1, got ${limit.lines}`);
    if (!(limit.windowSeconds > 0)) throw new RangeError(`window must be > 0 seconds, got ${limit.windowSeconds}`);
  }

  /** Writes the line unless this window's lines are used up (then it is counted). Debug lines pass the level check first. */
  write(level: LogLevel, msg: string, fields?: LogFields): void {
    if (!this.log.enabled(level)) return;
    const now = this.now();
    if (this.windowStart === undefined || now - this.windowStart >= this.limit.windowSeconds) {
      this.flush();
      this.windowStart = now;
    }
    if (this.written < this.limit.lines) {
      this.written++;
      this.log.log(level, this.event, msg, fields);
    } else {
      this.suppressed++;
    }
  }

  /** Says how many lines were left out in the window, if any, and starts a new one. */
  flush(): void {
    if (this.suppressed > 0) {
      this.log.warn(
        this.event,
        `${this.suppressed} more ${this.suppressed === 1 ? 'line' : 'lines'} like these left out (at most ${this.limit.lines} per ${this.limit.windowSeconds} s)`,
        { suppressed: this.suppressed },
      );
    }
    this.written = 0;
    this.suppressed = 0;
    this.windowStart = undefined;
  }
}
