/**
 * Starts a poise-manager process that serves its status page and waits for the address it
 * announces (`status page on http://…/`). Repository tooling for the packaging tests: the npm
 * package and the Debian package must serve the page they carry.
 */
import { spawn } from 'node:child_process';

/** A running process serving the page; `stop()` sends SIGTERM and waits for it. */
export interface ServingProcess {
  readonly url: string;
  readonly output: () => string;
  stop(): Promise<void>;
}

/** Spawns `cmd args` (which must include `--listen 127.0.0.1:0`) and resolves once it serves; rejects with its output if it exits or takes longer than `timeoutMs`. */
export function servePage(
  cmd: string,
  args: readonly string[],
  options: { cwd?: string; timeoutMs?: number } = {},
): Promise<ServingProcess> {
  const child = spawn(cmd, [...args], { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no 'status page on' line within ${options.timeoutMs ?? 60_000} ms:\n${out}`));
    }, options.timeoutMs ?? 60_000);
    const look = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /status page on (http:\/\/[^ ]+\/)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: m[1]!,
          output: () => out,
          stop: async () => {
            child.kill('SIGTERM');
            await exited;
          },
        });
      }
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code}) before serving the page:\n${out}`));
    });
  });
}
