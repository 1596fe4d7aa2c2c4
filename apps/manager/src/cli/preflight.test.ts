import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load';
import { startupProblems, statePathProblem } from './preflight';
import { STATE_FORMAT } from '../runtime/state';

describe('statePathProblem: whether the state file can be kept there (read only, never written)', () => {
  const base = mkdtempSync(join(tmpdir(), 'poise-state-path-'));
  writeFileSync(join(base, 'a-file'), '');
  writeFileSync(join(base, 'old.json'), JSON.stringify({ format: STATE_FORMAT, version: 7 }));
  writeFileSync(join(base, 'corrupt.json'), '{');
  it.each<[string, string, string | undefined]>([
    ['a file to be created in an existing directory', join(base, 'state.json'), undefined],
    ['a file in directories to be created', join(base, 'x', 'y', 'state.json'), undefined],
    ['an existing empty file', join(base, 'a-file'), undefined],
    ['a corrupt file (set aside and reported at start)', join(base, 'corrupt.json'), undefined],
    [
      'a directory',
      base,
      `state.file: '${base}' is a directory; expected the path of a file in it (e.g. '${base}/state.json')`,
    ],
    [
      'a file where a directory should be',
      join(base, 'a-file', 'state.json'),
      `state.file: '${join(base, 'a-file', 'state.json')}' cannot be created: '${join(base, 'a-file')}' is not a directory`,
    ],
    [
      'a state file of another version',
      join(base, 'old.json'),
      `state.file: '${join(base, 'old.json')}' has version 7; this poise-manager reads version 1 only (move it away to start without it)`,
    ],
  ])('%s', (_name, path, problem) => {
    expect(statePathProblem(path)).toBe(problem);
  });
});

describe('startupProblems', () => {
  const pve = (extra: Record<string, unknown>) =>
    parseConfig({ env: 'pve', pve: { urls: ['https://n1:8006'], 'token-env': 'T' }, ...extra }, undefined);
  it('the lock and the state file of env pve; nothing to check for the simulator, or without the lock', () => {
    const base = mkdtempSync(join(tmpdir(), 'poise-startup-'));
    const missing = join(base, 'not', 'here');
    expect(startupProblems(pve({ state: { file: base }, lock: { dir: missing } }))).toEqual([
      expect.stringMatching(
        /^lock\.dir: the lock directory '.*\/not\/here' does not exist and cannot be created: '.*\/not' does not exist; set 'lock\.dir'/,
      ),
      `state.file: '${base}' is a directory; expected the path of a file in it (e.g. '${base}/state.json')`,
    ]);
    expect(
      startupProblems(pve({ state: { file: join(base, 's.json') }, lock: { enabled: false, dir: missing } })),
    ).toEqual([]);
    expect(
      startupProblems(
        parseConfig({ sim: { 'case-dir': '/x' }, state: { file: base }, lock: { dir: missing } }, undefined),
      ),
    ).toEqual([]);
  });
});
