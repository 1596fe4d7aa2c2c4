/** Where a progress bar draws: a terminal stream (stderr). */
export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(chunk: string): unknown;
}

export interface Progress {
  update(done: number, total: number): void;
  /** Clears the bar (the line is left empty for what follows). */
  done(): void;
}

const NONE: Progress = { update() {}, done() {} };

/**
 * A one-line progress bar (`[#####-----]  12/40 runs  30 %`) redrawn in place, on a terminal
 * only: when the stream is not a TTY (piped, redirected, CI) it prints nothing.
 */
export function progressBar(stream: ProgressStream, label = 'runs'): Progress {
  if (!stream.isTTY) return NONE;
  let last = '';
  return {
    update(done, total) {
      const cols = Math.max(40, Math.min(stream.columns ?? 80, 120));
      const pct = total === 0 ? 100 : Math.floor((done / total) * 100);
      const text = ` ${String(done).padStart(String(total).length)}/${total} ${label} ${String(pct).padStart(3)} %`;
      const barWidth = Math.max(10, cols - text.length - 3);
      const filled = total === 0 ? barWidth : Math.round((done / total) * barWidth);
      const line = `[${'#'.repeat(filled)}${'-'.repeat(barWidth - filled)}]${text}`;
      if (line === last) return;
      last = line;
      stream.write(`\r${line}`);
    },
    done() {
      if (last !== '') stream.write(`\r${' '.repeat(last.length)}\r`);
      last = '';
    },
  };
}
