// poise-sim as a pipe writer (`poise-sim run … | head`): a reader that goes away is its choice,
// not an error. A child process whose stdout is closed before it writes a line must end quietly
// with status 0: no stack trace, no abort.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { upstreamAvailability } from './testing/upstream';

const ROOT = resolve(__dirname, '../../..');
const CLI = join(ROOT, 'apps/sim/src/cli.ts');
const SCENARIOS = join(ROOT, 'apps/sim/scenarios');

/** Runs the CLI with its stdout closed at once (the reader gone); resolves with how it ended and its stderr. */
function runWithClosedStdout(
  args: readonly string[],
): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--conditions=poise-source', '--import', 'tsx', CLI, ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // the parent's end of the pipe is its only reader: closed, every write of the child fails with EPIPE
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', fail);
    child.on('close', (code, signal) => done({ code, signal, stderr }));
  });
}

const tokenFile = join(mkdtempSync(join(tmpdir(), 'poise-pipe-')), 'token');
writeFileSync(tokenFile, 'poise@pve!sim=0b6bd1c4-7a3f-4c5e-9d8e-2f1a3b4c5d6e\n', { mode: 0o600 });
const { dir: upstream, present } = upstreamAvailability();

describe('a closed stdout ends poise-sim quietly', () => {
  it.each([
    ['run', ['run', join(SCENARIOS, 'rebalance-and-failover')]],
    ['summary', ['summary', join(SCENARIOS, 'noisy-dominant-guest')]],
    [
      'serve (a server: it stops with its output)',
      ['serve', join(SCENARIOS, 'rebalance-and-failover'), '--port', '0', '--token-file', tokenFile],
    ],
    ['usage', ['--help']],
  ])('%s: exit 0, nothing on stderr', async (_name, args) => {
    expect(await runWithClosedStdout(args)).toEqual({ code: 0, signal: null, stderr: '' });
  });

  it.skipIf(!present)('test (the reference cases)', async () => {
    expect(
      await runWithClosedStdout([
        'test',
        '--profile',
        'pve-5.2.0',
        join(upstream, 'test-basic1'),
        join(upstream, 'test-reboot1'),
      ]),
    ).toEqual({ code: 0, signal: null, stderr: '' });
  });
});
