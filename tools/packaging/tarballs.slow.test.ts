// The root README's "Try the packages from tarballs" runs as written: its ```sh block after
// `<!-- tarballs -->` is run by bash from the repository root (build, pack two packages and their
// @poise dependencies, `npm install --offline` into an empty npm project, an ES module and a
// CommonJS script), with the OS temp directory pointed at a directory of this test. Each
// `node …` line's comment is the output the README promises.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './workspace';

/** The ```sh block that follows the `<!-- tarballs -->` marker in the root README. */
function tarballBlock(readme: string): string {
  const start = readme.indexOf('<!-- tarballs -->');
  if (start < 0) throw new Error("README.md: no '<!-- tarballs -->' marker");
  const open = /^```sh\n/m.exec(readme.slice(start));
  if (!open) throw new Error("README.md: no ```sh block after '<!-- tarballs -->'");
  const from = start + open.index + open[0].length;
  const end = readme.indexOf('\n```\n', from);
  if (end < 0) throw new Error('README.md: the tarballs block is not closed');
  return `${readme.slice(from, end)}\n`;
}

const work = mkdtempSync(join(tmpdir(), 'poise-tarballs-'));
afterAll(() => rmSync(work, { recursive: true, force: true }), 120_000);

describe('README: try the packages from tarballs', () => {
  const block = tarballBlock(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8'));

  it('installs two packages and their @poise dependencies from tarballs with no registry, and runs them as ESM and CommonJS', async () => {
    const script = join(work, 'block.sh');
    writeFileSync(script, block);
    const promised = [...block.matchAll(/^node \S+ # (.+)$/gm)].map((m) => m[1]!);
    expect(promised).toHaveLength(2);
    const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        'bash',
        ['-euo', 'pipefail', script],
        {
          cwd: REPO_ROOT,
          timeout: 1_200_000,
          maxBuffer: 64 * 1024 * 1024,
          // npm's cache in the test directory too: --offline must not lean on an earlier install
          env: { ...process.env, TMPDIR: work, npm_config_cache: join(work, 'npm-cache'), NO_COLOR: '1' },
        },
        (err, stdout, stderr) =>
          resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
      );
    });
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    const lines = result.stdout.split('\n');
    for (const line of promised) expect(lines, result.stdout).toContain(line);
    // the packed set: the two named packages and exactly their @poise dependencies
    const tarballs = lines.filter((l) => l.endsWith('.tgz')).map((l) => l.replace(/^.*\//, ''));
    expect(tarballs).toEqual([
      expect.stringMatching(/^poise-imbalance-/),
      expect.stringMatching(/^poise-topsis-/),
      expect.stringMatching(/^poise-usage-/),
      expect.stringMatching(/^poise-rules-/),
    ]);
  }, 1_500_000);
});
