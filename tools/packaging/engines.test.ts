import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { engineFloor, intersectRanges } from './engines';

describe('intersectRanges', () => {
  it.each([
    [['>=20'], '>=20.0.0'],
    [['>=20', '>=18'], '>=20.0.0'],
    [['>=20', '>=20.18.1'], '>=20.18.1'],
    // yargs 18: 21.x and 22.0–22.11 are out, 23 and later are in
    [['>=20', '^20.19.0 || ^22.12.0 || >=23'], '^20.19.0 || >=22.12.0'],
    [['>=20', '^16 || ^18 || >=20'], '>=20.0.0'],
    [['>=20', '<20.5.0'], '>=20.0.0 <20.5.0'],
    [['>=22', '^20.19.0'], undefined],
  ])('%j → %s', (ranges, expected) => {
    expect(intersectRanges(ranges)).toBe(expected);
  });
});

describe('engineFloor', () => {
  const dir = mkdtempSync(join(tmpdir(), 'poise-engines-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }), 60_000);
  const pkg = (path: string, manifest: Record<string, unknown>) => {
    mkdirSync(join(dir, path), { recursive: true });
    writeFileSync(join(dir, path, 'package.json'), JSON.stringify(manifest));
  };
  // app → lib (>=20.18.1) → deep (^20.19.0 || >=22.12.0), beside a dependency without engines
  // and one whose engines are not a range (not counted)
  pkg('app', { name: 'app', dependencies: { lib: '1', plain: '1', odd: '1' } });
  pkg('app/node_modules/lib', {
    name: 'lib',
    version: '1.0.0',
    engines: { node: '>=20.18.1' },
    dependencies: { deep: '1' },
  });
  pkg('app/node_modules/deep', { name: 'deep', version: '2.0.0', engines: { node: '^20.19.0 || ^22.12.0 || >=23' } });
  pkg('app/node_modules/plain', { name: 'plain', version: '1.0.0' });
  pkg('app/node_modules/odd', { name: 'odd', version: '1.0.0', engines: { node: 'whenever' } });
  pkg('low', { name: 'low', dependencies: { plain: '1' } });
  pkg('low/node_modules/plain', { name: 'plain', version: '1.0.0', engines: { node: '>=14' } });

  it('raises the root range to what the installed tree declares, naming who raised it', () => {
    const app = { name: 'app', dependencies: { lib: '1', plain: '1', odd: '1' } };
    expect(engineFloor(join(dir, 'app'), app, '>=20')).toEqual({
      range: '^20.19.0 || >=22.12.0',
      raisedBy: ['lib@1.0.0: >=20.18.1', 'deep@2.0.0: ^20.19.0 || ^22.12.0 || >=23'],
    });
  });

  it('keeps the root text when nothing asks more', () => {
    expect(engineFloor(join(dir, 'low'), { name: 'low', dependencies: { plain: '1' } }, '>=20')).toEqual({
      range: '>=20',
      raisedBy: [],
    });
  });

  it('refuses a root range that is not one, and a tree no version satisfies', () => {
    expect(() => engineFloor(join(dir, 'low'), {}, 'twenty')).toThrow(
      `the root package.json's 'engines.node' "twenty" is not a semver range`,
    );
    expect(() => engineFloor(join(dir, 'app'), { dependencies: { lib: '1' } }, '<20')).toThrow(
      "no Node.js version satisfies the root's <20 and lib@1.0.0: >=20.18.1",
    );
  });
});
