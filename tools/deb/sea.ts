/**
 * The `poise-manager` executable of the Debian package: the daemon bundled into one CommonJS
 * script (esbuild, from the TypeScript sources) and injected into a copy of a Node.js binary
 * as a single executable application (SEA, `node --experimental-sea-config` + postject).
 *
 * Why a SEA: the daemon needs Node.js ≥ 20.18.1 (undici 7, the HTTP client of
 * `@poise/pve-api`), while Proxmox VE 8 runs on Debian 12, whose `nodejs` is 18. Carrying its
 * own Node.js, the package runs on PVE 8 and 9 nodes and on plain Debian 12/13 hosts alike,
 * whatever Node.js (if any) the host has.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';
import { REPO_ROOT } from '../packaging/workspace';
import { DebBuildError } from './errors';

/** The daemon's entry point, bundled from source (the `poise-source` export condition). */
export const ENTRY = 'apps/manager/src/cli.ts';

/**
 * The oldest Node.js the bundle runs on: undici 7 (`@poise/pve-api`) declares
 * `node >= 20.18.1`, the highest floor of the bundled packages.
 */
export const MIN_NODE = '20.18.1';

/** The placeholder in a Node.js binary that postject flips once the blob is injected. */
export const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/**
 * Where the bundled code believes it lies, relative to the executable: `dist/cli.js` of the npm
 * package, whose layout `/usr/share/poise-manager` keeps (the bundled scenarios beside `dist/`).
 * `import.meta.url` has no meaning in the CommonJS bundle; the daemon uses it only to find
 * `scenarios/` (`bundledSimCase`). Relative to the executable, so an unpacked package runs too.
 */
export const MODULE_URL_FROM_EXECUTABLE = '../share/poise-manager/dist/cli.js';

/** Debian architecture names of Node.js's `process.arch` values. */
const DEBIAN_ARCH: Record<string, string> = {
  x64: 'amd64',
  arm64: 'arm64',
  arm: 'armhf',
  ia32: 'i386',
  ppc64: 'ppc64el',
  s390x: 's390x',
  riscv64: 'riscv64',
  loong64: 'loong64',
};

export interface NodeBinary {
  path: string;
  /** `process.versions.node` of that binary. */
  version: string;
  /** Debian architecture of that binary (`amd64`). */
  arch: string;
}

/** `a` compared with `b`, both `x.y.z`: negative, 0 or positive. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * The Node.js binary the executable is made from, checked: `POISE_DEB_NODE` or the Node.js
 * running the build. It must be a build that can carry an application (the SEA fuse in the
 * executable itself: official and NodeSource builds; Debian's `nodejs` keeps it in libnode) and
 * at least {@link MIN_NODE}.
 */
export function nodeBinary(path: string, source: string): NodeBinary {
  let probe: string;
  try {
    probe = execFileSync(path, ['-p', 'process.versions.node + " " + process.arch'], { encoding: 'utf8' }).trim();
  } catch (err) {
    throw new DebBuildError(`${source}: '${path}' does not run as Node.js (${(err as Error).message.split('\n')[0]})`, {
      cause: err,
    });
  }
  const [version = '', nodeArch = ''] = probe.split(' ');
  if (!/^\d+\.\d+\.\d+$/.test(version))
    throw new DebBuildError(`${source}: '${path}' printed '${probe}' for its version`);
  if (compareVersions(version, MIN_NODE) < 0) {
    throw new DebBuildError(
      `${source}: Node.js ${version} at '${path}' is older than ${MIN_NODE}, which the daemon needs; set POISE_DEB_NODE to a newer binary`,
    );
  }
  const arch = DEBIAN_ARCH[nodeArch];
  if (arch === undefined)
    throw new DebBuildError(`${source}: no Debian architecture is known for Node.js arch '${nodeArch}'`);
  if (!readFileSync(path).includes(`${SEA_FUSE}:0`)) {
    throw new DebBuildError(
      `${source}: '${path}' cannot carry an application (no unused SEA fuse in the executable; Debian's own nodejs keeps Node.js in libnode): ` +
        'set POISE_DEB_NODE to an official Node.js binary (nodejs.org or NodeSource builds)',
    );
  }
  return { path, version, arch };
}

export interface Bundle {
  /** The CommonJS script, with the `import.meta.url` stand-in defined first. */
  code: string;
  /** The files esbuild read, relative to the repository root (for the copyright file). */
  inputs: string[];
}

/**
 * Bundles the daemon into one CommonJS script; any esbuild warning fails the build. `version`
 * (of `@poise/manager`) is compiled in, as its own build does (`apps/manager/tsup.config.ts`).
 */
export async function bundleDaemon(version: string): Promise<Bundle> {
  const urlVar = '__poiseModuleUrl';
  const banner = [
    '"use strict";',
    `var ${urlVar} = require("node:url").pathToFileURL(require("node:path").resolve(require("node:path").dirname(process.execPath), ${JSON.stringify(MODULE_URL_FROM_EXECUTABLE)})).href;`,
  ].join('\n');
  const result = await build({
    absWorkingDir: REPO_ROOT,
    entryPoints: [ENTRY],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    conditions: ['poise-source'],
    define: { 'import.meta.url': urlVar, __POISE_MANAGER_VERSION__: JSON.stringify(version) },
    banner: { js: banner },
    keepNames: true,
    legalComments: 'none',
    metafile: true,
    write: false,
    logLevel: 'silent',
  });
  if (result.warnings.length > 0) {
    throw new DebBuildError(
      `bundling ${ENTRY}: ${result.warnings.map((w) => `${w.location?.file ?? ''}:${w.location?.line ?? ''} ${w.text}`).join('; ')}`,
    );
  }
  const [out] = result.outputFiles;
  if (out === undefined) throw new DebBuildError(`bundling ${ENTRY}: esbuild wrote nothing`);
  return { code: out.text, inputs: Object.keys(result.metafile.inputs) };
}

/**
 * Writes `output`: a stripped copy of `node` carrying `bundle` (code cache included, no
 * experimental-feature warning at start). `work` is a scratch directory.
 */
export function writeExecutable(node: NodeBinary, bundle: Bundle, work: string, output: string): void {
  const main = join(work, 'poise-manager.cjs');
  const blob = join(work, 'poise-manager.blob');
  const config = join(work, 'sea-config.json');
  writeFileSync(main, bundle.code);
  writeFileSync(
    config,
    JSON.stringify({ main, output: blob, disableExperimentalSEAWarning: true, useCodeCache: true }),
  );
  quiet(node.path, ['--experimental-sea-config', config], 'node --experimental-sea-config');
  copyFileSync(node.path, output);
  chmodSync(output, 0o755);
  // Node.js binaries carry their symbols and some debug information (about 13 MB); strip as
  // dh_strip does, before the blob goes in (postject adds it as an ELF note of its own)
  quiet('strip', ['--strip-all', '--remove-section=.comment', '--remove-section=.note', output], 'strip (binutils)');
  const postject = join(dirname(createRequire(import.meta.url).resolve('postject/package.json')), 'dist', 'cli.js');
  quiet(process.execPath, [postject, output, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', SEA_FUSE], 'postject');
}

/** Runs a tool; its output is shown only when it fails. */
function quiet(cmd: string, args: string[], what: string): void {
  try {
    execFileSync(cmd, args, { stdio: 'pipe', encoding: 'utf8' });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new DebBuildError(`${what} failed: ${e.message.split('\n')[0]}\n${e.stdout ?? ''}${e.stderr ?? ''}`, {
      cause: err,
    });
  }
}
