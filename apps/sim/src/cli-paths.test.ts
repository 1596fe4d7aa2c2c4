import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { REPO_ROOT } from './testing/upstream';

// Paths of the wrong kind: a clear error, never a hang. Each run is a child process with a
// time limit, so a CLI that blocks on a FIFO fails the test instead of stalling the suite.
const root = mkdtempSync(join(tmpdir(), 'poise-sim-paths-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const CLI = resolve(REPO_ROOT, 'apps/sim/src/cli.ts');
/** Generous: starting node with tsx takes about a second on a busy machine. */
const CHILD_TIMEOUT_MS = 60_000;

function cli(...args: string[]): { status: number | null; stdout: string; stderr: string; timedOut: boolean } {
  const res = spawnSync(process.execPath, ['--import', 'tsx', '--conditions=poise-source', CLI, ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: CHILD_TIMEOUT_MS,
  });
  return { status: res.status, stdout: res.stdout, stderr: res.stderr, timedOut: res.signal !== null };
}

function fifo(path: string): string {
  execFileSync('mkfifo', [path]);
  return path;
}

/** A small valid case directory. */
function caseDir(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'cmdlist'), JSON.stringify([['power node1 on', 'power node2 on', 'power node3 on']]));
  writeFileSync(join(dir, 'service_config'), JSON.stringify({ 'vm:101': { node: 'node1', state: 'started' } }));
  return dir;
}

describe('poise-sim: paths of the wrong kind', () => {
  test('a FIFO given as the case directory', () => {
    const p = fifo(join(root, 'case-fifo'));
    const r = cli('run', p);
    expect(r.timedOut).toBe(false);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`'${p}' is a FIFO, expected a case directory`);
  });

  test('a FIFO as the cmdlist is refused by its type, not opened', () => {
    const dir = join(root, 'fifo-cmdlist');
    mkdirSync(dir);
    fifo(join(dir, 'cmdlist'));
    const r = cli('run', dir);
    expect(r.timedOut).toBe(false);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`'${join(dir, 'cmdlist')}' is a FIFO, expected a regular file`);
  });

  test('a FIFO as log.expect is a FAIL naming it, and the run goes on', () => {
    const dir = caseDir('fifo-expect');
    fifo(join(dir, 'log.expect'));
    const r = cli('test', dir);
    expect(r.timedOut).toBe(false);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(`'${join(dir, 'log.expect')}' is a FIFO, expected a regular file`);
    expect(r.stdout).toContain('0 passed, 1 failed');
  });

  test('a file where a directory of cases is expected', () => {
    const file = join(caseDir('a-file'), 'cmdlist');
    const r = cli('test', file);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`'${file}' is a file, expected a case directory or a directory of cases`);
  });

  test('--out that is a file, and an out/log that is a FIFO', () => {
    const dir = caseDir('out-case');
    const file = join(root, 'out-file');
    writeFileSync(file, 'x');
    const asFile = cli('run', dir, '--out', file);
    expect(asFile.status).toBe(2);
    expect(asFile.stderr).toContain(`'--out' '${file}' is a file, expected a directory`);

    const out = join(root, 'out-dir');
    mkdirSync(out);
    fifo(join(out, 'log'));
    const logFifo = cli('run', dir, '--out', out);
    expect(logFifo.timedOut).toBe(false);
    expect(logFifo.status).toBe(2);
    expect(logFifo.stderr).toContain(`'${join(out, 'log')}' is a FIFO, expected a regular file`);
  });

  test('rules-check: a FIFO argument, and a FIFO among the .cfg files', () => {
    const p = fifo(join(root, 'rules.fifo'));
    const r = cli('rules-check', p);
    expect(r.timedOut).toBe(false);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`'${p}' is a FIFO, expected a directory or a .cfg file`);

    const dir = join(root, 'rules-dir');
    mkdirSync(dir);
    fifo(join(dir, 'a.cfg'));
    const inDir = cli('rules-check', dir);
    expect(inDir.timedOut).toBe(false);
    expect(inDir.stdout).toContain('FAIL a.cfg');
    expect(inDir.stdout).toContain('0 passed, 1 failed');
  });
});
