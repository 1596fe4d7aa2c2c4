/**
 * The command line's terminal: where it writes and what it runs with. Its own module so the
 * subcommands (`plan/`) and the entry (`main.ts`) share it without importing each other.
 */
/** Where the CLI writes and what it runs with; tests replace any of it. */
export interface Io {
  out(line: string): void;
  err(line: string): void;
  /** Log lines (stdout by default). */
  logLine(line: string): void;
  readonly isTty: boolean;
  readonly env: NodeJS.ProcessEnv;
  /** Signal registration (`process` by default). */
  onSignal(signal: 'SIGTERM' | 'SIGINT' | 'SIGHUP', handler: () => void): () => void;
  /**
   * Calls `handler` when stdout (or stderr) is closed by its reader (`| head`); returns the
   * function that removes it. The command line's entry wires it (`cli.ts`); without it a closed
   * output is not noticed.
   */
  onOutputClosed?(handler: () => void): () => void;
  /**
   * A progress line on stderr: on a terminal redrawn in place (`''` clears it), otherwise
   * appended as a line. Absent: no progress is shown.
   */
  progress?(line: string): void;
}

export const processIo: Io = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  logLine: (line) => process.stdout.write(`${line}\n`),
  progress: (line) => {
    if (process.stderr.isTTY) process.stderr.write(`\r\u001b[K${line}`);
    else if (line !== '') process.stderr.write(`${line}\n`);
  },
  isTty: process.stdout.isTTY === true,
  env: process.env,
  onSignal: (signal, handler) => {
    process.on(signal, handler);
    return () => process.off(signal, handler);
  },
};
