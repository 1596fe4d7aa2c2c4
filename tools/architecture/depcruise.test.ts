/**
 * The architecture rules of `.dependency-cruiser.mjs` fire: a small tree in a temporary
 * directory, laid out like the repository, breaks each rule once (and one file breaks none),
 * and dependency-cruiser, run with the repository's own rule set, names exactly those.
 * (`pnpm depcruise` in CI checks the repository itself; this checks that the rules can fail.)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import config from '../../.dependency-cruiser.mjs';

const TREE: Record<string, string> = {
  // fine: a package using its own files and a lower tier through relative paths inside itself
  'packages/usage/src/index.ts': "import { a } from './a';\nexport const u = a;\n",
  'packages/usage/src/a.ts': 'export const a = 1;\n',
  // a circle
  'packages/topsis/src/index.ts': "import { y } from './y';\nexport const x = y;\n",
  'packages/topsis/src/y.ts': "import { x } from './index';\nexport const y = () => x;\n",
  // maths importing the HA core: a tier pointing up, and a reach into another package's src/
  'packages/imbalance/src/index.ts': "import { h } from '../../ha/src/other';\nexport const i = h;\n",
  'packages/ha/src/other.ts': 'export const h = 1;\n',
  'packages/ha/src/index.ts': "export { h } from './other';\n",
  // shipped code importing test support
  'packages/rules/src/index.ts': "import { t } from './testing/support';\nexport const r = t;\n",
  'packages/rules/src/testing/support.ts': 'export const t = 1;\n',
  // a test may use test support
  'packages/rules/src/rules.test.ts': "import { t } from './testing/support';\nexport const rt = t;\n",
  // pure maths doing I/O
  'packages/contention/src/index.ts': "import { readFileSync } from 'node:fs';\nexport const c = readFileSync;\n",
  // a library importing an app, and one app importing the other
  'packages/sim/src/index.ts': "import { m } from '../../../apps/manager/src/m';\nexport const s = m;\n",
  'apps/manager/src/m.ts': 'export const m = 1;\n',
  'apps/sim/src/cli.ts': "import { m } from '../../manager/src/m';\nexport const c = m;\n",
  // an import of a file that is not there
  'packages/policy/src/index.ts': "import { gone } from './moved-away';\nexport const p = gone;\n",
};

let dir: string;
let result: ICruiseResult;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'poise-depcruise-'));
  for (const [path, text] of Object.entries(TREE)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const out = await cruise(['packages', 'apps'], {
    baseDir: dir,
    validate: true,
    ruleSet: { forbidden: config.forbidden },
    tsPreCompilationDeps: true,
  });
  result = out.output as ICruiseResult;
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Rule names broken by each importing file. */
function broken(): Map<string, Set<string>> {
  const by = new Map<string, Set<string>>();
  for (const v of result.summary.violations) {
    const s = by.get(v.from) ?? new Set<string>();
    s.add(v.rule.name);
    by.set(v.from, s);
  }
  return by;
}

describe('.dependency-cruiser.mjs', () => {
  it('names each broken rule at the file that breaks it', () => {
    const by = broken();
    expect([...(by.get('packages/topsis/src/index.ts') ?? [])]).toContain('no-circular');
    expect([...(by.get('packages/imbalance/src/index.ts') ?? [])].sort()).toEqual([
      'only-through-the-public-entry',
      'tier-imbalance-points-down',
    ]);
    expect([...(by.get('packages/rules/src/index.ts') ?? [])]).toEqual(['no-test-support-in-production']);
    expect([...(by.get('packages/contention/src/index.ts') ?? [])]).toEqual(['pure-tiers-do-no-io']);
    expect([...(by.get('packages/sim/src/index.ts') ?? [])].sort()).toEqual([
      'only-through-the-public-entry',
      'packages-not-to-apps',
    ]);
    expect([...(by.get('packages/policy/src/index.ts') ?? [])]).toEqual(['not-to-unresolvable']);
    expect([...(by.get('apps/sim/src/cli.ts') ?? [])].sort()).toEqual([
      'apps-not-to-each-other',
      'only-through-the-public-entry',
    ]);
  });

  it('lets the rest be: own files, tests using test support, a package re-exporting itself', () => {
    const by = broken();
    for (const fine of ['packages/usage/src/index.ts', 'packages/rules/src/rules.test.ts', 'packages/ha/src/index.ts'])
      expect(by.get(fine), fine).toBeUndefined();
  });
});
