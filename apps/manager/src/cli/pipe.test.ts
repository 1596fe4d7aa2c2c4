// poise-manager as a pipe writer (`poise-manager --sim | head`): a reader that goes away is its
// choice, not an error. A child process whose stdout is closed before it writes a line must end
// quietly with status 0: no stack trace, no abort.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnScript } from '../testing/pve-support';

const CLI = join(__dirname, '..', 'cli.ts');

describe('a closed stdout ends poise-manager quietly', () => {
  it.each([
    ['--sim (the daemon on the bundled scenario)', ['--sim']],
    ['--help', ['--help']],
    ['--print-schema', ['--print-schema']],
  ])('%s: exit 0, nothing on stderr', async (_name, args) => {
    const cli = spawnScript(CLI, args);
    // the parent's end of the pipe is its only reader: closed, every write of the child fails with EPIPE
    cli.child.stdout!.destroy();
    expect(await cli.exited).toBe(0);
    expect(cli.stderr()).toBe('');
  });
});
