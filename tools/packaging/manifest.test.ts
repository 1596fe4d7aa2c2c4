// Every package under packages/ and apps/ follows the packaging conventions (CONTRIBUTING.md):
// checked on the repository's files, without a build. The pack-and-install test checks what
// `pnpm pack` actually produces.
import { describe, expect, it } from 'vitest';
import {
  listPackages,
  manifestProblems,
  readmeExamples,
  readRootManifest,
  rootLicenseText,
  withoutSourceCondition,
  type WorkspacePackage,
} from './workspace';

const packages = listPackages();
const rootManifest = readRootManifest();
const license = rootLicenseText();

describe('packaging conventions', () => {
  it('finds every package under packages/ and apps/', () => {
    // at least the seven libraries and two apps that exist today
    expect(packages.length).toBeGreaterThanOrEqual(9);
    expect(packages.map((p) => p.relDir)).toEqual(expect.arrayContaining(['packages/usage', 'apps/sim']));
  });

  it('the root LICENSE is the full AGPL-3.0 text, as the root license field declares', () => {
    expect(rootManifest.license).toBe('AGPL-3.0-or-later');
    expect(license).toMatch(/^GNU AFFERO GENERAL PUBLIC LICENSE\nVersion 3, 19 November 2007\n/);
    expect(license).toContain('END OF TERMS AND CONDITIONS');
  });

  it.each(packages.map((p): [string, WorkspacePackage] => [p.name, p]))(
    '%s: package.json, LICENSE and README follow the conventions',
    (_name, pkg) => {
      expect(manifestProblems(pkg, rootManifest, license)).toEqual([]);
    },
  );
});

describe('manifestProblems', () => {
  const base: WorkspacePackage = {
    name: '@poise/x',
    dir: '/nonexistent',
    relDir: 'packages/x',
    manifest: {
      name: '@poise/x',
      version: '0.1.0',
      description: 'x',
      keywords: ['x'],
      type: 'module',
      sideEffects: false,
      license: 'AGPL-3.0-or-later',
      repository: { type: 'git', url: (rootManifest.repository as { url: string }).url, directory: 'packages/x' },
      exports: { '.': { 'poise-source': './src/index.ts', types: './dist/index.d.ts', default: './dist/index.js' } },
      types: './dist/index.d.ts',
      files: ['dist', 'CHANGELOG.md'],
      engines: rootManifest.engines,
      publishConfig: {
        access: 'public',
        registry: 'https://registry.npmjs.org/',
        exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } },
      },
    },
  };
  const problemsOf = (patch: Record<string, unknown>) =>
    manifestProblems({ ...base, manifest: { ...base.manifest, ...patch } }, rootManifest, license)
      // the fixture directory does not exist: its LICENSE and README are always reported
      .filter((p) => !p.includes("'LICENSE'") && !p.includes('README.md'));

  it.each([
    ['a compliant manifest', {}, []],
    ['a private package', { private: true }, ["'private' must not be true"]],
    [
      'the source condition published',
      { publishConfig: { access: 'public', registry: 'https://registry.npmjs.org/' } },
      [
        "'publishConfig' must be",
        "must not contain the 'poise-source' condition",
        "'./src/index.ts' is not inside 'files'",
      ],
    ],
    [
      'another registry',
      {
        publishConfig: {
          access: 'public',
          registry: 'http://127.0.0.1:4873/',
          exports: withoutSourceCondition(base.manifest.exports),
        },
      },
      ["'publishConfig' must be"],
    ],
    [
      'restricted access',
      {
        publishConfig: {
          access: 'restricted',
          registry: 'https://registry.npmjs.org/',
          exports: withoutSourceCondition(base.manifest.exports),
        },
      },
      ["'publishConfig' must be"],
    ],
    [
      'an export outside files',
      { files: ['lib', 'CHANGELOG.md'] },
      ["'./dist/index.d.ts' is not inside 'files'", "'./dist/index.js' is not inside 'files'"],
    ],
    ['no CHANGELOG.md shipped', { files: ['dist'] }, ["'files' must include 'CHANGELOG.md'"]],
    [
      'an import-only export',
      {
        exports: { '.': { 'poise-source': './src/index.ts', types: './dist/index.d.ts', import: './dist/index.js' } },
        publishConfig: {
          access: 'public',
          registry: 'https://registry.npmjs.org/',
          exports: { '.': { types: './dist/index.d.ts', import: './dist/index.js' } },
        },
      },
      ["'exports' entry '.' must resolve under the 'default' condition"],
    ],
    ['no keywords', { keywords: [] }, ["'keywords' must be"]],
    ['no sideEffects', { sideEffects: undefined }, ["'sideEffects' must be declared"]],
    ['a repository without directory', { repository: { type: 'git', url: 'x' } }, ["'repository' must be"]],
    ['no engines', { engines: undefined }, ["'engines' must be"]],
    ['CommonJS', { type: 'commonjs' }, ["'type' must be 'module'"]],
    [
      'an app without bin',
      {
        exports: undefined,
        publishConfig: { access: 'public', registry: 'https://registry.npmjs.org/' },
        types: undefined,
      },
      ["must ship a 'bin'"],
    ],
  ] as Array<[string, Record<string, unknown>, string[]]>)('%s', (_label, patch, expected) => {
    const found = problemsOf(patch);
    expect(found).toHaveLength(expected.length);
    for (const [i, fragment] of expected.entries()) expect(found[i]).toContain(fragment);
  });
});

describe('readmeExamples', () => {
  it.each([
    [
      'the first ts block when none is marked',
      '# x\n```sh\nls\n```\n```ts\nA\n```\n```ts\nB\n```\n',
      [['ts', 'A\n', 5]],
    ],
    [
      'only marked blocks when some are',
      '```ts\nA\n```\n<!-- example -->\n\n```sh\nB\n```\n<!-- example -->\n```typescript\nC\n```\n',
      [
        ['sh', 'B\n', 6],
        ['ts', 'C\n', 10],
      ],
    ],
    ['a marker separated by text does not count', '<!-- example -->\ntext\n```sh\nB\n```\n', []],
    ['no example at all', '# x\n', []],
  ] as Array<[string, string, Array<[string, string, number]>]>)('%s', (_label, readme, expected) => {
    expect(readmeExamples(readme).map((e) => [e.lang, e.code, e.line])).toEqual(expected);
  });
});
