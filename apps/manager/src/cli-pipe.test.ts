// poise-manager as a pipe writer (`poise-manager --sim | head`): a reader that goes away is its
// choice, not an error. A child process whose stdout is closed before it writes a line must end
// quietly with status 0: no stack trace, no abort.
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../../..');
const CLI = join(ROOT, 'apps/manager/src/cli.ts');

/** Runs the CLI with its stdout closed at once (the reader gone); resolves with how it ended and its stderr. */
function runWithClosedStdout(args: readonly string[]): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--conditions=poise-source', '--import', 'tsx', CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    // the parent's end of the pipe is its only reader: closed, every write of the child fails with EPIPE
    child.stdout!.destroy();
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', fail);
    child.on('close', (code, signal) => done({ code, signal, stderr }));
  });
}

describe('a closed stdout ends poise-manager quietly', () => {
  it.each([
    ['--sim (the daemon on the bundled scenario)', ['--sim']],
    ['--help', ['--help']],
    ['--print-schema', ['--print-schema']],
  ])('%s: exit 0, nothing on stderr', async (_name, args) => {
    expect(await runWithClosedStdout(args)).toEqual({ code: 0, signal: null, stderr: '' });
  });
});
