/**
 * The packaging conventions of every published `@poise/*` package, as code: discovery of the
 * packages, the fields their package.json must carry, the published (packed) manifest, and the
 * README examples that the pack-and-install test runs. Used by `sync.ts` (writes the common
 * fields and LICENSE copies) and by the tests in this directory (check them).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { engineFloor } from './engines';

/** The repository root (this file is tools/packaging/workspace.ts). */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Directories whose sub-directories with a package.json are published packages. */
export const PACKAGE_PARENTS = ['packages', 'apps'] as const;

/** The export condition that points the workspace at TypeScript sources; never published. */
export const SOURCE_CONDITION = 'poise-source';

/** The HTML comment that marks a README code block as a runnable example. */
export const EXAMPLE_MARKER = '<!-- example -->';

// A package.json is JSON: a loose record is the honest type before validation.
export type Manifest = Record<string, unknown>;

export interface WorkspacePackage {
  /** Package name from its package.json (or the directory when it has none). */
  name: string;
  /** Absolute directory. */
  dir: string;
  /** Directory relative to the repository root with `/` separators (`packages/usage`). */
  relDir: string;
  manifest: Manifest;
}

/** Every directory under packages/ and apps/ that has a package.json, sorted by directory. */
export function listPackages(root: string = REPO_ROOT): WorkspacePackage[] {
  const found: WorkspacePackage[] = [];
  for (const parent of PACKAGE_PARENTS) {
    const parentDir = join(root, parent);
    if (!existsSync(parentDir)) continue;
    for (const entry of readdirSync(parentDir).sort()) {
      const dir = join(parentDir, entry);
      const file = join(dir, 'package.json');
      if (!statSync(dir).isDirectory() || !existsSync(file)) continue;
      let manifest: Manifest;
      try {
        manifest = JSON.parse(readFileSync(file, 'utf8')) as Manifest;
      } catch (err) {
        throw new Error(`invalid JSON in '${relative(root, file)}'`, { cause: err });
      }
      const name = typeof manifest.name === 'string' ? manifest.name : `${parent}/${entry}`;
      found.push({ name, dir, relDir: `${parent}/${entry}`, manifest });
    }
  }
  return found;
}

export function readRootManifest(root: string = REPO_ROOT): Manifest {
  return JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Manifest;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `exports` with every `poise-source` condition removed (recursively); other values as they are. */
export function withoutSourceCondition(exportsField: unknown): unknown {
  if (!isRecord(exportsField)) return exportsField;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(exportsField)) {
    if (key === SOURCE_CONDITION) continue;
    out[key] = withoutSourceCondition(value);
  }
  return out;
}

/** Whether a condition named `poise-source` appears anywhere in `exportsField`. */
export function hasSourceCondition(exportsField: unknown): boolean {
  if (!isRecord(exportsField)) return false;
  return Object.entries(exportsField).some(([key, value]) => key === SOURCE_CONDITION || hasSourceCondition(value));
}

/** Every file path an `exports` value can resolve to (the leaves), in document order. */
export function exportTargets(exportsField: unknown): string[] {
  if (typeof exportsField === 'string') return [exportsField];
  if (Array.isArray(exportsField)) return exportsField.flatMap(exportTargets);
  if (isRecord(exportsField)) return Object.values(exportsField).flatMap(exportTargets);
  return [];
}

/**
 * The manifest as `pnpm pack` / `pnpm publish` write it: `publishConfig` fields that pnpm
 * applies (exports, types, bin, main, module, typings) replace the top-level ones. Used to
 * check the package.json in the repository; the pack test reads the real packed manifest.
 */
export function publishedManifest(manifest: Manifest): Manifest {
  const out: Manifest = { ...manifest };
  const pc = isRecord(manifest.publishConfig) ? manifest.publishConfig : {};
  for (const key of ['exports', 'types', 'typings', 'main', 'module', 'bin']) {
    if (key in pc) out[key] = pc[key];
  }
  return out;
}

/** The `bin` field as name → path (a string bin is named after the unscoped package name). */
export function binEntries(manifest: Manifest): Array<[string, string]> {
  const bin = manifest.bin;
  if (typeof bin === 'string') {
    const name = (typeof manifest.name === 'string' ? manifest.name : '').replace(/^@[^/]+\//, '');
    return [[name, bin]];
  }
  if (isRecord(bin)) return Object.entries(bin).filter((e): e is [string, string] => typeof e[1] === 'string');
  return [];
}

/** A library exports modules (has `exports`); an app only ships bins. */
export function isLibrary(manifest: Manifest): boolean {
  return manifest.exports !== undefined;
}

/** Whether `file` (`./dist/x.js`) lies inside one of the `files` entries (`dist`). */
function coveredByFiles(file: string, files: string[]): boolean {
  const path = file.replace(/^\.\//, '');
  return files.some((f) => {
    const entry = f.replace(/^\.\//, '').replace(/\/$/, '');
    return path === entry || path.startsWith(`${entry}/`);
  });
}

/** The LICENSE text every package carries: a byte copy of the root LICENSE. */
export function rootLicenseText(root: string = REPO_ROOT): string {
  return readFileSync(join(root, 'LICENSE'), 'utf8');
}

/**
 * Where every package is published: the root package.json's `publishConfig.registry`, the one
 * place to change it. `pnpm packaging:sync` copies it into each package's `publishConfig`,
 * which both tools of a release read for that package: `pnpm publish` (before its own
 * `registry` setting and `pnpm_config_registry`) and `changeset publish`, which asks
 * `npm info` there whether a version is out (before `npm_config_registry`). See RELEASING.md.
 */
export function publishRegistry(rootManifest: Manifest): string {
  const registry = isRecord(rootManifest.publishConfig) ? rootManifest.publishConfig.registry : undefined;
  if (typeof registry !== 'string' || !/^https?:\/\/[^/\s]+\/(\S*\/)?$/.test(registry)) {
    throw new Error(
      `the root package.json's 'publishConfig.registry' must be the registry URL ending in '/', got ${JSON.stringify(registry)}`,
    );
  }
  return registry;
}

function rootNodeRange(rootManifest: Manifest): string {
  const node = isRecord(rootManifest.engines) ? rootManifest.engines.node : undefined;
  if (typeof node !== 'string') throw new Error("the root package.json has no 'engines.node' string");
  return node;
}

/**
 * The fields `sync.ts` writes into every package.json, derived from the root package.json and
 * the package's own `exports`: license, repository (with the package directory), engines (as
 * the installed dependencies need) and publishConfig (public access, the root's registry,
 * `exports` without the `poise-source` condition).
 */
export function commonFields(pkg: WorkspacePackage, rootManifest: Manifest): Manifest {
  const repo = isRecord(rootManifest.repository) ? rootManifest.repository : {};
  const fields: Manifest = {
    license: rootManifest.license,
    repository: { type: 'git', url: repo.url, directory: pkg.relDir },
    engines: { node: engineFloor(pkg.dir, pkg.manifest, rootNodeRange(rootManifest)).range },
  };
  const publishConfig: Record<string, unknown> = {
    ...(isRecord(pkg.manifest.publishConfig) ? pkg.manifest.publishConfig : {}),
    access: 'public',
    registry: publishRegistry(rootManifest),
  };
  if (hasSourceCondition(pkg.manifest.exports)) publishConfig.exports = withoutSourceCondition(pkg.manifest.exports);
  else delete publishConfig.exports;
  fields.publishConfig = publishConfig;
  return fields;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Everything wrong with one package's repository files against the conventions, as messages
 * naming the field; empty when it complies. Does not need a build.
 */
export function manifestProblems(pkg: WorkspacePackage, rootManifest: Manifest, licenseText: string): string[] {
  const m = pkg.manifest;
  const problems: string[] = [];
  const where = `${pkg.relDir}/package.json`;
  const need = (ok: boolean, message: string) => {
    if (!ok) problems.push(`${where}: ${message}`);
  };

  need(typeof m.name === 'string' && m.name.startsWith('@poise/'), "'name' must be '@poise/<name>'");
  need(typeof m.version === 'string' && /^\d+\.\d+\.\d+/.test(m.version), "'version' must be a semver version");
  need(typeof m.description === 'string' && m.description.trim() !== '', "'description' must be a non-empty string");
  need(
    Array.isArray(m.keywords) && m.keywords.length > 0 && m.keywords.every((k) => typeof k === 'string' && k !== ''),
    "'keywords' must be a non-empty array of strings",
  );
  need(m.private !== true, "'private' must not be true (every package under packages/ and apps/ is published)");
  need(m.type === 'module', "'type' must be 'module' (ESM only)");

  const expected = commonFields(pkg, rootManifest);
  for (const key of ['license', 'repository', 'engines'] as const) {
    need(same(m[key], expected[key]), `'${key}' must be ${JSON.stringify(expected[key])} (run 'pnpm packaging:sync')`);
  }
  need(
    same(m.publishConfig, expected.publishConfig),
    `'publishConfig' must be ${JSON.stringify(expected.publishConfig)} (run 'pnpm packaging:sync')`,
  );

  const files = Array.isArray(m.files) ? m.files.filter((f): f is string => typeof f === 'string') : [];
  need(files.length > 0, '\'files\' must list what is shipped (e.g. ["dist"])');
  need(
    files.includes('CHANGELOG.md'),
    "'files' must include 'CHANGELOG.md' (written by 'changeset version', read by whoever upgrades)",
  );

  if (isRecord(m.exports)) {
    for (const [subpath, target] of Object.entries(m.exports)) {
      need(
        !isRecord(target) || typeof target.default === 'string',
        `'exports' entry '${subpath}' must resolve under the 'default' condition (not 'import' only), so that require() works on Node.js >= 20.19`,
      );
    }
  }

  const published = publishedManifest(m);
  need(
    !hasSourceCondition(published.exports),
    `the published 'exports' must not contain the '${SOURCE_CONDITION}' condition`,
  );
  const shipped = new Set([
    ...exportTargets(published.exports),
    ...(typeof published.types === 'string' ? [published.types] : []),
    ...binEntries(published).map(([, path]) => path),
  ]);
  for (const target of shipped) {
    need(
      coveredByFiles(target, files),
      `'${target}' is not inside 'files' (${JSON.stringify(files)}), so it would not be shipped`,
    );
  }

  if (isLibrary(m)) {
    need(
      typeof published.types === 'string',
      "'types' must name the shipped declaration file (e.g. './dist/index.d.ts')",
    );
    need(
      typeof m.sideEffects === 'boolean' || Array.isArray(m.sideEffects),
      "'sideEffects' must be declared (false for a package whose modules only declare things)",
    );
  } else {
    need(binEntries(m).length > 0, "a package without 'exports' must ship a 'bin'");
  }

  const licenseFile = join(pkg.dir, 'LICENSE');
  need(
    existsSync(licenseFile) && readFileSync(licenseFile, 'utf8') === licenseText,
    "'LICENSE' beside it must be a copy of the root LICENSE (run 'pnpm packaging:sync')",
  );

  const readme = join(pkg.dir, 'README.md');
  if (!existsSync(readme)) {
    problems.push(`${pkg.relDir}/README.md: missing`);
  } else if (isLibrary(m)) {
    problems.push(...exampleProblems(pkg, readFileSync(readme, 'utf8')));
  }
  return problems;
}

export interface ReadmeExample {
  lang: 'ts' | 'sh';
  code: string;
  /** 1-based line of the opening fence in the README. */
  line: number;
}

const TS_LANGS = new Set(['ts', 'typescript']);
const SH_LANGS = new Set(['sh', 'bash', 'shell']);

/**
 * The README's runnable examples: every fenced block (```ts or ```sh) whose preceding
 * non-blank line is `<!-- example -->`; when none is marked, the first ```ts block.
 */
export function readmeExamples(readme: string): ReadmeExample[] {
  const lines = readme.split('\n');
  const blocks: Array<ReadmeExample & { marked: boolean }> = [];
  let lastText = '';
  for (let i = 0; i < lines.length; i++) {
    const open = /^```([\w-]*)\s*$/.exec(lines[i]!);
    if (!open) {
      if (lines[i]!.trim() !== '') lastText = lines[i]!.trim();
      continue;
    }
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    const lang = open[1]!.toLowerCase();
    const kind = TS_LANGS.has(lang) ? 'ts' : SH_LANGS.has(lang) ? 'sh' : undefined;
    if (kind)
      blocks.push({ lang: kind, code: `${body.join('\n')}\n`, line: start + 1, marked: lastText === EXAMPLE_MARKER });
    lastText = '';
  }
  const marked = blocks.filter((b) => b.marked);
  const chosen = marked.length > 0 ? marked : blocks.filter((b) => b.lang === 'ts').slice(0, 1);
  return chosen.map(({ lang, code, line }) => ({ lang, code, line }));
}

/** A library's README must have a TypeScript example that imports the package by its name. */
function exampleProblems(pkg: WorkspacePackage, readme: string): string[] {
  const where = `${pkg.relDir}/README.md`;
  const examples = readmeExamples(readme);
  const ts = examples.filter((e) => e.lang === 'ts');
  if (ts.length === 0)
    return [`${where}: no TypeScript example (the first \`\`\`ts block, or blocks after '${EXAMPLE_MARKER}')`];
  const problems: string[] = [];
  const importsOf = (code: string) =>
    [...code.matchAll(/\bfrom\s+['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]/g)].map((m) => m[1] ?? m[2]!);
  if (!ts.some((e) => importsOf(e.code).includes(pkg.name))) {
    problems.push(`${where}: the example must import from '${pkg.name}'`);
  }
  for (const e of examples) {
    for (const spec of importsOf(e.code)) {
      if (spec.startsWith('.') || spec.startsWith('/')) {
        problems.push(
          `${where}:${e.line}: the example imports '${spec}'; import packages by name so it runs where it is installed`,
        );
      }
    }
  }
  return problems;
}
