/**
 * ARCHITECTURE.md stays true to the tree: every package is in exactly one tier of its table,
 * the same tiers `.dependency-cruiser.mjs` enforces, and every file it cites exists (a moved
 * file makes this fail, naming the citation).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TIERS } from '../../.dependency-cruiser.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DOC = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8');
const SKIP = new Set(['node_modules', 'dist', '.git', '.turbo', 'docs', 'test-output', 'coverage']);

/** Every file of the tree (relative, `/`-separated), outside build output and dependencies. */
function files(dir = ROOT, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files(path, out);
    else out.push(relative(ROOT, path).split(sep).join('/'));
  }
  return out;
}

/** The packages of each row of the tiers table: `| tier | \`a\`, \`b\` | … |`. */
function documentedTiers(): Map<string, string[]> {
  const section = DOC.slice(DOC.indexOf('## Tiers'), DOC.indexOf('```mermaid'));
  const tiers = new Map<string, string[]>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 4 || cells[1] === 'Tier' || cells[1]?.startsWith('---')) continue;
    tiers.set(
      cells[1] ?? '',
      [...(cells[2] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? ''),
    );
  }
  return tiers;
}

describe('ARCHITECTURE.md', () => {
  it('puts every package in exactly one tier, the tiers .dependency-cruiser.mjs enforces', () => {
    const tiers = documentedTiers();
    const packages = readdirSync(join(ROOT, 'packages')).sort();
    const listed = [...tiers.entries()].filter(([t]) => t !== 'apps').flatMap(([, p]) => p);
    expect([...listed].sort()).toEqual(packages);
    expect(new Set(listed).size).toBe(listed.length);
    expect([...tiers.values()].filter((_, i) => i < TIERS.length)).toEqual(TIERS);
  });

  it('cites only files that exist', () => {
    const all = files();
    const cited = [...DOC.matchAll(/`([\w@./-]+\.(?:ts|mjs|md|json|jsonc|yaml))`/g)].map((m) => m[1] ?? '');
    expect(cited.length).toBeGreaterThan(10);
    const missing = cited.filter((c) => !all.some((f) => f === c || f.endsWith(`/${c}`)));
    expect(missing).toEqual([]);
  });
});
