// What a stranger gets from the registry: every package under packages/ and apps/ is built once,
// packed once with `pnpm pack` (publishConfig applied, workspace:* replaced), and checked as a
// tarball: the packed manifest points only at shipped files, publint and
// @arethetypeswrong/cli (profile esm-only) find nothing. Then all the tarballs are installed
// together with one `npm install` into an empty project in the OS temp directory (no workspace
// around it), each library's README example is type-checked by tsc against the installed
// packages and run there as ESM, and each bin runs through npx. From a CommonJS project beside
// it, every library loads with require() (Node.js >= 20.19 loads ES modules so, through the
// `default` export condition), in JavaScript and in TypeScript compiled to CommonJS. A second
// project upgrades only @poise/policy under the installed variants: one copy of it remains
// (the variants take it as a peer dependency), and its errors are the consumer's PolicyError.
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servePage } from '@poise/test-support/serve';
import {
  binEntries,
  exportTargets,
  isLibrary,
  listPackages,
  readmeExamples,
  REPO_ROOT,
  SOURCE_CONDITION,
  hasSourceCondition,
  type Manifest,
  type ReadmeExample,
  type WorkspacePackage,
} from './workspace';

interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command without a shell; never throws for a non-zero exit. The default time limit is
 * generous: on a loaded 2-core machine `pnpm build` alone has taken more than 5 minutes.
 */
function run(cmd: string, args: string[], cwd: string, timeoutMs = 1_200_000): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(
      cmd,
      args,
      {
        cwd,
        timeout: timeoutMs,
        maxBuffer: 64 * 1024 * 1024,
        env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({
          code,
          stdout: String(stdout),
          stderr: String(stderr) + (err && typeof err.code !== 'number' ? `\n${err.message}` : ''),
        });
      },
    );
  });
}

/** stdout of a command that must succeed (with stderr too when `withStderr`). */
async function runOk(cmd: string, args: string[], cwd: string, what: string, withStderr = false): Promise<string> {
  const r = await run(cmd, args, cwd);
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  return withStderr ? `${r.stdout}\n${r.stderr}` : r.stdout;
}

const TSC = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const ATTW = join(REPO_ROOT, 'node_modules', '@arethetypeswrong', 'cli', 'dist', 'index.js');
const NODE_TYPES = join(REPO_ROOT, 'node_modules', '@types');

interface Packed {
  pkg: WorkspacePackage;
  tarball: string;
  /** package.json as packed. */
  manifest: Manifest;
  /** Paths inside the tarball, without the leading `package/`. */
  files: Set<string>;
  examples: Array<ReadmeExample & { file: string }>;
}

const packages = listPackages();
const packed = new Map<string, Packed>();
let work = '';
let project = '';
/** tsc diagnostics per example file (relative to the project), and those naming no example. */
const tscErrors = new Map<string, string[]>();
let tscOther: string[] = [];
/** `npm install` warnings that a declared engine is not met. */
let installWarnings: string[] = [];
let setupError: unknown;

function slug(name: string): string {
  return name.replace(/^@/, '').replace(/[^\w.-]+/g, '-');
}

beforeAll(async () => {
  try {
    await runOk('pnpm', ['build'], REPO_ROOT, 'pnpm build');
    work = mkdtempSync(join(tmpdir(), 'poise-pack-'));
    const tarballs = join(work, 'tarballs');
    project = join(work, 'project');
    mkdirSync(tarballs);
    mkdirSync(join(project, 'examples'), { recursive: true });

    for (const pkg of packages) {
      const out = await runOk(
        'pnpm',
        ['pack', '--pack-destination', tarballs, '--json'],
        pkg.dir,
        `pnpm pack in ${pkg.relDir}`,
      );
      const tarball = (JSON.parse(out) as { filename: string }).filename;
      const list = await runOk('tar', ['-tzf', tarball], work, `tar -t ${basename(tarball)}`);
      const files = new Set(
        list
          .split('\n')
          .filter(Boolean)
          .map((f) => f.replace(/^package\//, '')),
      );
      const manifest = JSON.parse(
        await runOk('tar', ['-xzOf', tarball, 'package/package.json'], work, 'tar -x'),
      ) as Manifest;
      const readme = existsSync(join(pkg.dir, 'README.md')) ? readFileSync(join(pkg.dir, 'README.md'), 'utf8') : '';
      const examples = readmeExamples(readme).map((e, i) => ({
        ...e,
        file: `examples/${slug(pkg.name)}-${i + 1}.${e.lang}`,
      }));
      packed.set(pkg.name, { pkg, tarball, manifest, files, examples });
    }

    // one install of every tarball; overrides pin the internal dependencies to the tarballs too
    const deps = Object.fromEntries([...packed.values()].map((p) => [p.pkg.name, `file:${p.tarball}`]));
    const overrides = Object.fromEntries([...packed.keys()].map((name) => [name, `$${name}`]));
    writeFileSync(
      join(project, 'package.json'),
      `${JSON.stringify({ name: 'poise-pack-check', private: true, type: 'module', dependencies: deps, overrides }, null, 2)}\n`,
    );
    const install = await runOk(
      'npm',
      ['install', '--no-audit', '--no-fund', '--loglevel=warn'],
      project,
      'npm install of the tarballs',
      true,
    );
    installWarnings = install.split('\n').filter((l) => /EBADENGINE/.test(l));

    // every example in its own file; one tsc program type-checks them and emits the JS that runs
    for (const p of packed.values()) {
      for (const e of p.examples) {
        writeFileSync(join(project, e.file), e.code);
        if (e.lang === 'sh') chmodSync(join(project, e.file), 0o755);
      }
    }
    writeFileSync(
      join(project, 'tsconfig.json'),
      `${JSON.stringify(
        {
          compilerOptions: {
            target: 'ES2022',
            lib: ['ES2022'],
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            skipLibCheck: false,
            types: ['node'],
            typeRoots: [NODE_TYPES],
            outDir: 'out',
            rootDir: 'examples',
          },
          include: ['examples/*.ts'],
        },
        null,
        2,
      )}\n`,
    );
    const hasTs = [...packed.values()].some((p) => p.examples.some((e) => e.lang === 'ts'));
    if (hasTs) {
      const tsc = await run('node', [TSC, '-p', 'tsconfig.json', '--pretty', 'false'], project);
      for (const line of `${tsc.stdout}${tsc.stderr}`.split('\n').filter((l) => l.trim() !== '')) {
        const file = /^(examples\/[^(]+)\(/.exec(line)?.[1];
        if (file) tscErrors.set(file, [...(tscErrors.get(file) ?? []), line]);
        else if (!/^\s/.test(line)) tscOther.push(line);
      }
      if (tsc.code !== 0 && tscErrors.size === 0 && tscOther.length === 0) tscOther = [`tsc exited ${tsc.code}`];
    }
  } catch (err) {
    setupError = err;
  }
}, 2_400_000);

// removing two installed projects (thousands of files) takes more than vitest's default 10 s
// on a loaded machine
afterAll(() => {
  if (work && !process.env.POISE_KEEP_PACK) rmSync(work, { recursive: true, force: true });
}, 300_000);

/** Fails the test with what the setup caught, when it caught something. */
function ready(): void {
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows what the setup caught, as caught
  if (setupError) throw setupError;
}

function get(name: string): Packed {
  ready();
  const p = packed.get(name);
  if (!p) throw new Error(`'${name}' was not packed`);
  return p;
}

describe('packages as installed from their tarballs', () => {
  it('discovers every package under packages/ and apps/ and type-checks the examples as one program', () => {
    ready();
    expect(packed.size).toBe(packages.length);
    // every @poise package in the install came from a tarball, none from a registry
    const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { resolved?: string }>;
    };
    const fromElsewhere = Object.entries(lock.packages)
      .filter(([path, entry]) => /(^|\/)node_modules\/@poise\//.test(path) && !entry.resolved?.startsWith('file:'))
      .map(([path, entry]) => `${path} ← ${entry.resolved ?? '?'}`);
    expect(fromElsewhere).toEqual([]);
    expect(tscOther).toEqual([]);
    expect(installWarnings, 'a declared engine that the installed Node.js does not meet').toEqual([]);
  });

  const libraries = packages.filter((p) => isLibrary(p.manifest));
  /** Every module specifier a library exports (`@poise/x`, `@poise/x/testing`). */
  const specifiers = () =>
    libraries.flatMap((p) =>
      Object.keys(get(p.name).manifest.exports as Record<string, unknown>).map((sub) =>
        sub === '.' ? p.name : `${p.name}/${sub.replace(/^\.\//, '')}`,
      ),
    );

  it('every library loads with require() from CommonJS (Node.js >= 20.19), or says it is an ES module', async () => {
    ready();
    const cjs = join(project, 'cjs');
    mkdirSync(cjs, { recursive: true });
    writeFileSync(join(cjs, 'package.json'), '{ "name": "poise-cjs-check", "private": true, "type": "commonjs" }\n');
    writeFileSync(
      join(cjs, 'require-all.js'),
      [
        "'use strict';",
        `for (const name of ${JSON.stringify(specifiers())}) {`,
        '  let m;',
        "  try { m = require(name); } catch (err) { console.log(`${name}: ${err.code}: ${err.message.split('\\n')[0]}`); continue; }",
        "  console.log(`${name}: ${Object.keys(m).length > 0 ? 'ok' : 'no exports'}`);",
        '}',
        '',
      ].join('\n'),
    );
    const r = await run('node', ['require-all.js'], cjs);
    expect(r.code, r.stderr).toBe(0);
    const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
    const lines = r.stdout.trim().split('\n');
    if (major > 20 || (major === 20 && minor >= 19)) {
      expect(lines).toEqual(specifiers().map((s) => `${s}: ok`));
    } else {
      for (const line of lines) expect(line).toMatch(/: ERR_REQUIRE_ESM: .*ES Module/);
    }
  }, 300_000);

  it('a CommonJS TypeScript project imports every library, type-checks and runs', async () => {
    ready();
    const cjs = join(project, 'cjs-ts');
    mkdirSync(join(cjs, 'src'), { recursive: true });
    writeFileSync(join(cjs, 'package.json'), '{ "name": "poise-cjs-ts-check", "private": true, "type": "commonjs" }\n');
    writeFileSync(
      join(cjs, 'tsconfig.json'),
      `${JSON.stringify(
        {
          compilerOptions: {
            target: 'ES2022',
            lib: ['ES2022'],
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            types: ['node'],
            typeRoots: [NODE_TYPES],
            outDir: 'out',
            rootDir: 'src',
          },
          include: ['src/*.ts'],
        },
        null,
        2,
      )}\n`,
    );
    const specs = specifiers();
    writeFileSync(
      join(cjs, 'src', 'main.ts'),
      [
        ...specs.map((spec, i) => `import * as m${i} from '${spec}';`),
        "import { defineCriteria, rankAlternatives } from '@poise/topsis';",
        `const counts: number[] = [${specs.map((_, i) => `Object.keys(m${i}).length`).join(', ')}];`,
        'if (counts.some((n) => n === 0)) throw new Error(`a library without exports: ${counts.join(",")}`);',
        // one criterion, higher is better: the alternatives ranked best first
        "const ranks = rankAlternatives(defineCriteria([{ name: 'value', weight: 1 }]), [[1], [3], [2]]);",
        "console.log(typeof require === 'function' ? 'commonjs' : 'esm', ranks.join(','));",
        '',
      ].join('\n'),
    );
    const tsc = await run('node', [TSC, '-p', 'tsconfig.json', '--pretty', 'false'], cjs);
    expect(tsc.code, `tsc:\n${tsc.stdout}${tsc.stderr}`).toBe(0);
    expect(readFileSync(join(cjs, 'out', 'main.js'), 'utf8'), 'compiled to CommonJS').toContain(
      'require("@poise/topsis")',
    );
    const r = await run('node', [join('out', 'main.js')], cjs);
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout.trim()).toBe('commonjs 1,2,0');
  }, 600_000);

  it('upgrading only @poise/policy under the variants leaves one copy, whose errors the variants throw', async () => {
    ready();
    // @poise/policy as its next patch release: the packed tarball with the version raised
    const next = join(work, 'policy-next');
    mkdirSync(next);
    await runOk('tar', ['-xzf', get('@poise/policy').tarball, '-C', next], work, 'tar -x @poise/policy');
    const manifestFile = join(next, 'package', 'package.json');
    const policyManifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
    const [maj, min, pat] = String(policyManifest.version).split('.').map(Number) as [number, number, number];
    const nextVersion = `${maj}.${min}.${pat + 1}`;
    writeFileSync(manifestFile, `${JSON.stringify({ ...policyManifest, version: nextVersion }, null, 2)}\n`);
    const nextTarball = join(work, `poise-policy-${nextVersion}.tgz`);
    await runOk('tar', ['-czf', nextTarball, '-C', next, 'package'], work, 'tar -c @poise/policy next');

    const upgrade = join(work, 'upgrade');
    mkdirSync(upgrade);
    const tarballOf = (name: string) => `file:${get(name).tarball}`;
    // every package that takes @poise/policy as a peer (the policy variants)
    const variants = [...packed.values()]
      .filter(
        (p) => (p.manifest.peerDependencies as Record<string, string> | undefined)?.['@poise/policy'] !== undefined,
      )
      .map((p) => p.pkg.name);
    expect(variants).toEqual(expect.arrayContaining(['@poise/policy-stable', '@poise/policy-pressure']));
    const base = { name: 'poise-upgrade-check', private: true, type: 'module' };
    const others = Object.fromEntries(
      [...packed.keys()].filter((n) => n !== '@poise/policy').map((n) => [n, tarballOf(n)]),
    );
    // no override for @poise/policy itself: what the variants declare decides how many copies
    // npm installs (an exact dependency on the older version would add one under each variant)
    const write = (policy: string) =>
      writeFileSync(
        join(upgrade, 'package.json'),
        `${JSON.stringify(
          {
            ...base,
            dependencies: { ...Object.fromEntries(variants.map((v) => [v, tarballOf(v)])), '@poise/policy': policy },
            overrides: others,
          },
          null,
          2,
        )}\n`,
      );
    write(tarballOf('@poise/policy'));
    await runOk(
      'npm',
      ['install', '--no-audit', '--no-fund', '--loglevel=error'],
      upgrade,
      'npm install (variants and @poise/policy)',
    );
    write(`file:${nextTarball}`);
    await runOk(
      'npm',
      ['install', '--no-audit', '--no-fund', '--loglevel=error'],
      upgrade,
      'npm install (only @poise/policy upgraded)',
    );

    const copies = (await runOk('find', ['node_modules', '-path', '*/@poise/policy/package.json'], upgrade, 'find'))
      .trim()
      .split('\n')
      .sort();
    expect(copies, 'copies of @poise/policy').toEqual(['node_modules/@poise/policy/package.json']);
    expect((JSON.parse(readFileSync(join(upgrade, copies[0]!), 'utf8')) as Manifest).version).toBe(nextVersion);
    writeFileSync(
      join(upgrade, 'check.mjs'),
      [
        "import { PolicyError } from '@poise/policy';",
        "import { cooldownFilter } from '@poise/policy-stable';",
        "import { pressureGate } from '@poise/policy-pressure';",
        'const thrown = [];',
        'for (const make of [() => cooldownFilter({ seconds: 0 }), () => pressureGate({ cpuPercent: 101, memPercent: 0 })]) {',
        '  try { make(); thrown.push("nothing thrown"); } catch (err) { thrown.push(err instanceof PolicyError ? err.code : `not a PolicyError: ${err}`); }',
        '}',
        'console.log(thrown.join(" "));',
        '',
      ].join('\n'),
    );
    const r = await run('node', ['check.mjs'], upgrade);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('invalid-config invalid-config');
  }, 1_200_000);

  it('@poise/manager carries its status page (dist/ui) and its installed bin serves it, with no network', async () => {
    const { files } = get('@poise/manager');
    for (const f of ['index.html', 'app.js', 'app.css', 'third-party-licenses.txt'])
      expect(files.has(`dist/ui/${f}`), `dist/ui/${f} in the tarball`).toBe(true);
    const served = await servePage(
      'npx',
      ['--no-install', 'poise-manager', '--sim', '--speed', '1', '--listen', '127.0.0.1:0'],
      { cwd: project },
    );
    try {
      const page = await fetch(served.url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('src="ui/app.js"');
      const script = await fetch(new URL('ui/app.js', served.url));
      expect(script.status).toBe(200);
      expect((await script.text()).length).toBeGreaterThan(100_000);
      expect((await fetch(new URL('api/policy', served.url))).status).toBe(200);
    } finally {
      await served.stop();
    }
  }, 120_000);

  describe.each(packages.map((p) => [p.name]))('%s', (name) => {
    it('packed package.json points only at shipped files, without the poise-source condition', () => {
      const { manifest, files } = get(name);
      expect(hasSourceCondition(manifest.exports), `'${SOURCE_CONDITION}' in the packed exports`).toBe(false);
      const targets = [
        ...exportTargets(manifest.exports),
        ...(typeof manifest.types === 'string' ? [manifest.types] : []),
        ...binEntries(manifest).map(([, path]) => path),
      ];
      const missing = targets.filter((t) => !files.has(t.replace(/^\.\//, '')));
      expect(missing, `referenced but not in the tarball (files: ${[...files].join(', ')})`).toEqual([]);
      expect(
        files.has('LICENSE') && files.has('README.md') && files.has('package.json'),
        'LICENSE, README.md, package.json shipped',
      ).toBe(true);
      const deps = { ...(manifest.dependencies as Record<string, string> | undefined) };
      expect(
        Object.entries(deps).filter(([, v]) => v.startsWith('workspace:')),
        'unresolved workspace: ranges',
      ).toEqual([]);
      expect(manifest.private, 'private').not.toBe(true);
      expect((manifest.publishConfig as { access?: string } | undefined)?.access).toBe('public');
    });

    it('publint finds nothing in the tarball', async () => {
      const { tarball } = get(name);
      const data = readFileSync(tarball);
      const result = await publint({
        pack: { tarball: data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) },
        level: 'suggestion',
        strict: true,
      });
      expect(
        result.messages.map((m) => `${m.type}: ${formatMessage(m, result.pkg, { color: false }) ?? m.code}`),
      ).toEqual([]);
    });

    it('are-the-types-wrong (profile esm-only) passes for the tarball, or it ships no types because it only has bins', async () => {
      const { tarball, manifest } = get(name);
      if (!isLibrary(manifest)) {
        // an app: nothing to import, so no types to check; it must then ship a bin
        expect(manifest.types).toBeUndefined();
        expect(binEntries(manifest).length).toBeGreaterThan(0);
        return;
      }
      const r = await run(
        'node',
        [ATTW, tarball, '--profile', 'esm-only', '--format', 'ascii', '--no-color', '--no-emoji'],
        work,
      );
      expect(r.code, `attw:\n${r.stdout}\n${r.stderr}`).toBe(0);
    });

    it('its bins start from the installed package (npx <bin> --help prints its name and exits 0 or 2)', async () => {
      const { manifest, files } = get(name);
      for (const [bin, path] of binEntries(manifest)) {
        const file = path.replace(/^\.\//, '');
        expect(files.has(file), `bin '${bin}' file '${path}' shipped`).toBe(true);
        const head = readFileSync(join(project, 'node_modules', name, file), 'utf8').split('\n')[0];
        expect(head, `bin '${bin}' shebang`).toBe('#!/usr/bin/env node');
        const r = await run('npx', ['--no-install', bin, '--help'], project, 60_000);
        // 2 is the house exit code for a usage error (printing the usage); a crash exits 1
        expect([0, 2], `npx ${bin} --help exited ${r.code}:\n${r.stdout}\n${r.stderr}`).toContain(r.code);
        expect(`${r.stdout}${r.stderr}`).toContain(bin);
      }
    });

    it('its README examples type-check against the installed packages and run there', async () => {
      const { manifest, examples } = get(name);
      if (isLibrary(manifest))
        expect(examples.filter((e) => e.lang === 'ts').length, 'a library README has a ```ts example').toBeGreaterThan(
          0,
        );
      for (const e of examples) {
        const where = `${name} README.md line ${e.line} (${e.file})`;
        if (e.lang === 'ts') {
          expect(tscErrors.get(e.file) ?? [], `tsc: ${where}`).toEqual([]);
          const js = join('out', basename(e.file).replace(/\.ts$/, '.js'));
          const r = await run('node', [js], project, 120_000);
          expect(r.code, `node ${js} (${where}):\n${r.stdout}\n${r.stderr}`).toBe(0);
        } else {
          const r = await run('bash', ['-euo', 'pipefail', e.file], project, 120_000);
          expect(r.code, `bash ${e.file} (${where}):\n${r.stdout}\n${r.stderr}`).toBe(0);
        }
      }
    });
  });
});
