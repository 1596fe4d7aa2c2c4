import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { loadCase, simulate, withCrsOverrides } from '@poise/sim';
import { REPO_ROOT, scenarioVariants, upstreamAvailability } from './testing/upstream';
import { main } from './main';

// The reference HA manager's regression cases, run in place from ../shared (never copied).
// Every case on the committed pass list must reproduce its log.expect byte for byte under
// the pve-5.2.0 profile; a listed case that fails is a test failure.
const { dir, present, mustExist } = upstreamAvailability();
const passList = readFileSync(resolve(REPO_ROOT, 'apps/sim/conformance/pass-list.txt'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));

describe('upstream reference cases (pve-5.2.0)', () => {
  test('the reference cases are available', () => {
    if (!present && mustExist) {
      throw new Error(`reference cases not found at '${dir}' (set POISE_UPSTREAM_TESTS); required under CI=true`);
    }
  });

  describe.skipIf(!present)('pass list', () => {
    test.each(passList)('%s reproduces log.expect', (name) => {
      const caseDir = join(dir, name);
      expect(existsSync(caseDir), `case '${name}' of the pass list is missing in '${dir}'`).toBe(true);
      const expected = readFileSync(join(caseDir, 'log.expect'), 'utf8');
      const { log } = simulate(loadCase(caseDir, name), { profile: 'pve-5.2.0' });
      expect(log).toBe(expected);
    });

    test('simulations share no state: the same case twice in one process gives the same log', () => {
      // fa: failure counters and the LRM start-up flag are process-global in the reference;
      // in poise they belong to one simulated cluster
      const caseDir = join(dir, 'test-resource-failure1');
      const first = simulate(loadCase(caseDir), { profile: 'pve-5.2.0' }).log;
      const second = simulate(loadCase(caseDir), { profile: 'pve-5.2.0' }).log;
      expect(second).toBe(first);
    });

    test('overall count over every case in the folder', () => {
      const all = readdirSync(dir)
        .filter((n) => n.startsWith('test-'))
        .sort();
      let passed = 0;
      const failed: string[] = [];
      for (const name of all) {
        try {
          const expected = readFileSync(join(dir, name, 'log.expect'), 'utf8');
          const { log } = simulate(loadCase(join(dir, name), name), { profile: 'pve-5.2.0' });
          if (log === expected) passed++;
          else failed.push(name);
        } catch {
          failed.push(name);
        }
      }
      console.log(
        `upstream conformance: ${passed} passed, ${failed.length} failed${failed.length ? ` (${failed.join(', ')})` : ''}`,
      );
      // cases outside the pass list may fail, but the listed ones never do
      expect(failed.filter((n) => passList.includes(n))).toEqual([]);
    });
  });
});

// poise's own scenarios (README + inputs + expected log): `log.expect` under the default
// pve-9.2 profile; `log.expect.pve-5.2.0`, where present, under pve-5.2.0 (the reference's
// behaviour where the default profile fixes it; the README says which); and, where the
// scenario has a `variants` file (`{"<name>": ["<crs-key>=<value>", ...]}`), each variant
// under pve-9.2 with those datacenter.cfg overrides (`poise-sim --set`) against
// `log.expect.<name>`.
describe('poise scenarios', () => {
  const scenarios = resolve(REPO_ROOT, 'apps/sim/scenarios');
  const runs: Array<[string, 'pve-9.2' | 'pve-5.2.0', string, string[]]> = [];
  for (const name of readdirSync(scenarios).sort()) {
    runs.push([name, 'pve-9.2', 'log.expect', []]);
    if (existsSync(join(scenarios, name, 'log.expect.pve-5.2.0')))
      runs.push([name, 'pve-5.2.0', 'log.expect.pve-5.2.0', []]);
    for (const [variant, sets] of Object.entries(scenarioVariants(join(scenarios, name))))
      runs.push([name, 'pve-9.2', `log.expect.${variant}`, sets]);
  }
  test.each(runs)('%s under %s reproduces %s', (name, profile, expectFile, sets) => {
    const caseDir = join(scenarios, name);
    expect(existsSync(join(caseDir, 'README')), `scenario '${name}' has no README`).toBe(true);
    const { log } = simulate(withCrsOverrides(loadCase(caseDir, name), sets), { profile });
    expect(log).toBe(readFileSync(join(caseDir, expectFile), 'utf8'));
  });

  test('every log.expect.<name> belongs to a variant or the pve-5.2.0 profile', () => {
    for (const name of readdirSync(scenarios)) {
      const known = new Set([
        'log.expect',
        'log.expect.pve-5.2.0',
        ...Object.keys(scenarioVariants(join(scenarios, name))).map((v) => `log.expect.${v}`),
      ]);
      const files = readdirSync(join(scenarios, name)).filter((f) => f.startsWith('log.expect'));
      expect(
        files.filter((f) => !known.has(f)),
        `scenario '${name}'`,
      ).toEqual([]);
    }
  });
});

describe('poise-sim CLI', () => {
  const capture = () => {
    const out: string[] = [];
    const err: string[] = [];
    const chunks: string[] = [];
    return {
      out,
      err,
      chunks,
      io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l), write: (c: string) => chunks.push(c) },
    };
  };

  test.skipIf(!present)('test prints PASS lines and the closing count', () => {
    const c = capture();
    const code = main(['test', '--profile', 'pve-5.2.0', join(dir, 'test-basic1'), join(dir, 'test-reboot1')], c.io);
    expect(code).toBe(0);
    expect(c.out).toEqual(['PASS test-basic1', 'PASS test-reboot1', '2 passed, 0 failed']);
  });

  test.skipIf(!present)('run prints the log and never writes into the case directory', () => {
    const c = capture();
    const before = readdirSync(join(dir, 'test-basic1')).sort();
    expect(main(['run', '--profile', 'pve-5.2.0', join(dir, 'test-basic1')], c.io)).toBe(0);
    expect(c.chunks.join('')).toBe(readFileSync(join(dir, 'test-basic1', 'log.expect'), 'utf8'));
    expect(readdirSync(join(dir, 'test-basic1')).sort()).toEqual(before);
  });

  test.skipIf(!present)('rules-check reproduces the rules_cfgs expectations', () => {
    const c = capture();
    expect(main(['rules-check', join(dir, 'rules_cfgs')], c.io)).toBe(0);
    expect(c.out.at(-1)).toMatch(/^\d+ passed, 0 failed$/);
  });

  test('a bad case is a FAIL with the reason, and the run goes on', () => {
    const c = capture();
    const code = main(['test', resolve(REPO_ROOT, 'apps/sim/src/testing/bad-command')], c.io);
    expect(code).toBe(1);
    const lines = c.out.join('\n').split('\n');
    expect(lines[0]).toBe('FAIL bad-command');
    expect(lines[1]).toContain("cmdlist' [1][0] 'power node9 on': unknown node 'node9'");
    expect(lines.at(-1)).toBe('0 passed, 1 failed');
  });

  test('--help prints the usage on stdout and exits 0; no command is a usage error', () => {
    const help = capture();
    expect(main(['--help'], help.io)).toBe(0);
    expect(help.out[0]).toMatch(/^usage:\n {2}poise-sim run <case-dir>/);
    expect(help.err).toEqual([]);
    const none = capture();
    expect(main([], none.io)).toBe(2);
    expect(none.err[0]).toMatch(/^usage:/);
  });

  test('usage errors exit 2 and name the problem', () => {
    const c = capture();
    expect(main(['run', 'x', '--profile', 'pve-1'], c.io)).toBe(2);
    expect(c.err[0]).toBe("unknown profile 'pve-1' (pve-5.2.0|pve-9.2)");
  });
});
