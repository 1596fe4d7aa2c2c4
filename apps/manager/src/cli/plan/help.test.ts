import { describe, expect, it } from 'vitest';
import { EXIT_OK, EXIT_USAGE, main } from '../main';
import { captureIo } from '../../testing/support';

async function run(argv: string[]) {
  const c = captureIo();
  const code = await main(argv, c.io, {});
  return { code, out: c.out.join('\n'), err: c.err.join('\n') };
}

describe('<subcommand> --help', () => {
  it('drain --help says how many motions run at once and that only what must move moves', async () => {
    const r = await run(['drain', '--help']);
    const text = r.out.replace(/\s+/g, ' ');
    expect(text).not.toContain('one motion at a time');
    expect(text).toContain("up to --parallel motions in flight at once (default: the cluster's max_workers, else 4)");
    expect(text).toContain('another guest only where that is the only way to make room, each named with why');
  });

  it.each([
    ['plan', '--what-if node-failure'],
    ['drain', '--execute'],
    ['place', '--guest <spec>'],
  ])('%s --help prints its own usage and options, exit 0', async (name, option) => {
    for (const argv of [
      [name, '--help'],
      [name, '-h'],
      [name, '--snapshot', 'x.json', '--help'],
    ]) {
      const r = await run(argv);
      expect(r.code).toBe(EXIT_OK);
      expect(r.err).toBe('');
      expect(r.out).toMatch(new RegExp(`^usage: poise-manager ${name} `));
      expect(r.out).toContain(option);
      expect(r.out).toContain('-h, --help');
      // its own, not the daemon's whole help
      expect(r.out).not.toContain('commands:');
    }
  });

  it('a usage error of a subcommand shows that subcommand’s usage', async () => {
    const r = await run(['drain', 'node1', '--bogus']);
    expect(r.code).toBe(EXIT_USAGE);
    expect(r.err).toContain("unknown option '--bogus' for 'drain'");
    expect(r.err).toContain('usage: poise-manager drain <node>');
    expect(r.err).not.toContain('usage: poise-manager plan');
  });
});

describe('bad inputs on the command line are named (exit 2)', () => {
  it.each([
    [['plan', '--sim', '--drain', 'node1', '--drain', 'node1'], "'--drain node1' given more than once"],
    [
      ['place', '--sim', '--guest', 'cpu=2,mem=4G,load=99'],
      "'--guest cpu=2,mem=4G,load=99': load (cores in use) 99 is more than the 2 cores assigned by cpu=",
    ],
    [
      ['plan', '--sim', '--at', 'noon'],
      "'--at' takes start, end or a simulated time (seconds, 90m, 2h or hh:mm:ss), got 'noon'",
    ],
    [
      ['plan', '--snapshot', 'x.json', '--at', 'end'],
      "'--at' says when a simulated cluster is read: it goes with --sim only",
    ],
    [
      ['drain', 'node1', '--sim', '--parallel', '0'],
      "'--parallel' takes the number of motions in flight, a whole number from 1 to 64, got '0'",
    ],
    [['drain', 'node1', '--sim', '--parallel', '2.5'], "got '2.5'"],
    [['drain', 'node1', '--sim', '--parallel', '65'], "got '65'"],
  ])('%j', async (argv, message) => {
    const r = await run(argv);
    expect(r.code).toBe(EXIT_USAGE);
    expect(r.err).toContain(message);
  });
});
