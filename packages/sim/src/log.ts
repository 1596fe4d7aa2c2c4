/**
 * The simulator's log, byte-compatible with the reference tester: every line is
 * `sprintf("%-5s %5d %12s: %s\n", level, time, id, msg)` with one trailing newline of the
 * message removed first.
 */
export class SimLog {
  private readonly lines: string[] = [];

  constructor(private readonly sink?: (line: string) => void) {}

  /** A daemon line: `debug` is dropped and the level is cut to 4 characters. */
  daemon(level: string, time: number, id: string, msg: string): void {
    if (level === 'debug') return;
    this.write(level.slice(0, 4), time, id, msg);
  }

  /** A hardware line (`hardware`, `cmdlist`, `watchdog`, ...): the level is kept whole. */
  hardware(level: string, time: number, id: string, msg: string): void {
    this.write(level, time, id, msg);
  }

  private write(level: string, time: number, id: string, msg: string): void {
    const text = msg.endsWith('\n') ? msg.slice(0, -1) : msg;
    const line = `${level.padEnd(5)} ${String(Math.trunc(time)).padStart(5)} ${id.padStart(12)}: ${text}\n`;
    this.lines.push(line);
    this.sink?.(line);
  }

  /** The whole log so far. */
  text(): string {
    return this.lines.join('');
  }
}
