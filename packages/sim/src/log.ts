/** Lines kept one by one before they are joined into a block. */
const LINES_PER_BLOCK = 1024;

/**
 * The simulator's log, byte-compatible with the reference tester: every line is
 * `sprintf("%-5s %5d %12s: %s\n", level, time, id, msg)` with one trailing newline of the
 * message removed first.
 */
export class SimLog {
  /** Joined blocks of lines: flat strings, much smaller than the lines' concatenation trees. */
  private readonly blocks: string[] = [];
  private pending: string[] = [];

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
    this.pending.push(line);
    if (this.pending.length >= LINES_PER_BLOCK) {
      this.blocks.push(this.pending.join(''));
      this.pending = [];
    }
    this.sink?.(line);
  }

  /** The whole log so far. */
  text(): string {
    return this.blocks.join('') + this.pending.join('');
  }
}
