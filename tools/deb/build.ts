/**
 * `pnpm deb [--out <dir>]`: builds `poise-manager_<version>_<arch>.deb` from the repository
 * (no build of the packages needed: the daemon is bundled from the TypeScript sources). The
 * last line printed is the path of the package. See tools/deb/README.md for the layout.
 *
 * Inputs: the version of `@poise/manager` (apps/manager/package.json, set by `changeset
 * version`); `POISE_DEB_NODE` (the Node.js binary the executable is made from; default: the one
 * running this script); `SOURCE_DATE_EPOCH` (file times and the newest changelog date; default:
 * the time of the last commit); `DEBFULLNAME` / `DEBEMAIL` (the maintainer). Needs dpkg-deb,
 * dpkg-shlibdeps and strip (Debian's dpkg-dev and binutils).
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { REPO_ROOT, type Manifest } from '../packaging/workspace';
import {
  type ChangelogEntry,
  COMMON_LICENSES,
  controlText,
  copyrightLines,
  copyrightText,
  debianChangelog,
  debianVersion,
  type LicensedComponent,
  maintainerOf,
  PACKAGE_NAME,
  parseChangesetsChangelog,
  referToCommonApache,
  rfc2822,
} from './control';
import { DebBuildError } from './errors';
import { bundleDaemon, nodeBinary, type NodeBinary, writeExecutable } from './sea';
import { manPage } from './manpage';
import { buildStatusPage } from '../../apps/manager/web/build';

const MANAGER_DIR = join(REPO_ROOT, 'apps', 'manager');
const DEBIAN_DIR = join(REPO_ROOT, 'tools', 'deb', 'debian');

/** Where the package puts things (the unit in the directory Debian 12 and 13 both read). */
export const LAYOUT = {
  bin: 'usr/bin/poise-manager',
  unit: 'usr/lib/systemd/system/poise-manager.service',
  config: 'etc/poise-manager/config.yaml',
  share: 'usr/share/poise-manager',
  /** The status page the daemon serves at `/` (`dist/ui/` beside where the bundle believes it lies). */
  page: 'usr/share/poise-manager/dist/ui',
  /** The Grafana dashboard of the daemon's metrics (`tools/grafana/poise-manager.json`). */
  grafana: 'usr/share/poise-manager/grafana/poise-manager.json',
  man: 'usr/share/man/man1/poise-manager.1.gz',
  doc: 'usr/share/doc/poise-manager',
  lintianOverrides: 'usr/share/lintian/overrides/poise-manager',
} as const;

/** The installed path of the executable in the unit's `ExecStart=`. */
const SOURCE_UNIT_EXEC = '/usr/local/bin/poise-manager';

function readJson(file: string): Manifest {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Manifest;
  } catch (err) {
    throw new DebBuildError(`cannot read '${relative(REPO_ROOT, file)}' as JSON (${(err as Error).message})`, {
      cause: err,
    });
  }
}

function tool(cmd: string, args: string[], options: { cwd?: string } = {}): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT')
      throw new DebBuildError(`'${cmd}' is not installed (Debian: apt-get install dpkg-dev binutils)`, { cause: err });
    throw new DebBuildError(`${cmd} ${args.join(' ')} failed: ${e.stderr?.trim() || e.message}`, { cause: err });
  }
}

/** The time the files and the newest changelog entry carry. */
export function sourceDateEpoch(env: NodeJS.ProcessEnv): number {
  const given = env.SOURCE_DATE_EPOCH;
  if (given !== undefined) {
    if (!/^\d+$/.test(given))
      throw new DebBuildError(`SOURCE_DATE_EPOCH: expected whole seconds since 1970, got ${JSON.stringify(given)}`);
    return Number(given);
  }
  try {
    return Number(
      execFileSync('git', ['log', '-1', '--format=%ct'], { cwd: REPO_ROOT, encoding: 'utf8', stdio: 'pipe' }).trim(),
    );
  } catch {
    return Math.floor(Date.now() / 1000);
  }
}

/** When `## <version>` first appeared in the CHANGELOG.md (git), or `fallback`. */
function releaseTime(changelogFile: string, version: string, fallback: number): number {
  try {
    const out = execFileSync(
      'git',
      ['log', '--format=%ct', `-S## ${version}`, '--', relative(REPO_ROOT, changelogFile)],
      {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        stdio: 'pipe',
      },
    ).trim();
    const times = out.split('\n').filter(Boolean).map(Number);
    return times.length > 0 ? times[times.length - 1]! : fallback;
  } catch {
    return fallback;
  }
}

/** The Debian changelog entries: every release of apps/manager/CHANGELOG.md, newest first. */
function changelogEntries(version: string, epoch: number): ChangelogEntry[] {
  const file = join(MANAGER_DIR, 'CHANGELOG.md');
  const releases = existsSync(file) ? parseChangesetsChangelog(readFileSync(file, 'utf8')) : [];
  const entries = releases.map((r) => {
    const v = debianVersion(r.version, `apps/manager/CHANGELOG.md: heading '## ${r.version}'`);
    return { version: v, items: r.items, date: rfc2822(v === version ? epoch : releaseTime(file, r.version, epoch)) };
  });
  if (!entries.some((e) => e.version === version)) {
    entries.unshift({
      version,
      items: [`@poise/manager ${version}: no release notes (apps/manager/CHANGELOG.md has no entry for it yet).`],
      date: rfc2822(epoch),
    });
  }
  return entries;
}

/** The npm package directory of a bundled file (`node_modules/.pnpm/x@1/node_modules/x/`), if any. */
function packageDirOf(input: string): string | undefined {
  const matches = [...input.matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)\//g)];
  const last = matches[matches.length - 1];
  return last === undefined ? undefined : input.slice(0, last.index + last[0].length);
}

const LICENSE_FILE = /^(licen[cs]e|copying)(\.(md|txt))?$/i;

/** The license of each npm package in the bundle, read from its package.json and license file. */
function bundledComponents(inputs: readonly string[], into = '/usr/bin/poise-manager'): LicensedComponent[] {
  const dirs = [...new Set(inputs.map(packageDirOf).filter((d): d is string => d !== undefined))];
  return dirs
    .map((dir) => {
      const manifest = readJson(join(REPO_ROOT, dir, 'package.json'));
      const name = String(manifest.name);
      const license = typeof manifest.license === 'string' ? manifest.license : undefined;
      if (license === undefined)
        throw new DebBuildError(`${dir}package.json: no 'license' string; the copyright file cannot name it`);
      const file = readdirSync(join(REPO_ROOT, dir)).find((f) => LICENSE_FILE.test(f));
      if (file === undefined) throw new DebBuildError(`${dir}: no LICENSE file; the copyright file needs its text`);
      const text = readFileSync(join(REPO_ROOT, dir, file), 'utf8');
      return {
        files: `node_modules/${name}/*`,
        copyright: copyrightLines(text),
        license,
        text: license in COMMON_LICENSES ? undefined : text,
        comment: `${name} ${String(manifest.version)} (npm), bundled into ${into}`,
      };
    })
    .sort((a, b) => (a.files < b.files ? -1 : a.files > b.files ? 1 : 0));
}

/** Node.js's LICENSE (the runtime and every library it includes) beside the binary used. */
function nodeComponent(node: NodeBinary, env: NodeJS.ProcessEnv): LicensedComponent {
  const bin = dirname(node.path);
  const candidates = [
    env.POISE_DEB_NODE_LICENSE,
    join(bin, '..', 'LICENSE'),
    join(bin, '..', 'share', 'doc', 'node', 'LICENSE'),
    join(bin, '..', 'share', 'doc', 'nodejs', 'LICENSE'),
  ].filter((c): c is string => c !== undefined);
  const found = candidates.find((c) => existsSync(c));
  if (found === undefined) {
    throw new DebBuildError(
      `no LICENSE of the Node.js at '${node.path}' (looked at ${candidates.join(', ')}); set POISE_DEB_NODE_LICENSE`,
    );
  }
  const text = referToCommonApache(readFileSync(found, 'utf8'));
  return {
    files: 'usr/bin/poise-manager',
    copyright: copyrightLines(text.split('\n').slice(0, 40).join('\n')),
    license: 'Node.js',
    text,
    comment: `the Node.js ${node.version} runtime of the executable, with the libraries its license lists`,
  };
}

/** The unit of apps/manager with the package's path of the executable. */
function packageUnit(): string {
  const unit = readFileSync(join(MANAGER_DIR, 'poise-manager.service'), 'utf8');
  const body = unit.slice(unit.indexOf('[Unit]'));
  if (!body.includes(`ExecStart=${SOURCE_UNIT_EXEC} `)) {
    throw new DebBuildError(
      `apps/manager/poise-manager.service: no 'ExecStart=${SOURCE_UNIT_EXEC} …' line to point at /usr/bin`,
    );
  }
  return [
    '# poise-manager, from the Debian package. Not enabled by the package: put the API token in',
    '# /etc/poise-manager/token (mode 0600), check /etc/poise-manager/config.yaml, then',
    '# `systemctl enable --now poise-manager`. Local changes: `systemctl edit poise-manager`.',
    '# `systemctl reload poise-manager` re-reads the config (SIGHUP); stop finishes the round.',
    body.replaceAll(`${SOURCE_UNIT_EXEC} `, `/${LAYOUT.bin} `),
  ].join('\n');
}

function write(root: string, path: string, content: string | Buffer, mode = 0o644): void {
  const file = join(root, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
  chmodSync(file, mode);
}

/** gzip at the highest level, without a name or time in the header (as dh_compress). */
function gzip(content: string | Buffer): Buffer {
  return gzipSync(content, { level: 9 });
}

/** Every file under `dir`, relative to it, sorted. */
function walk(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name), base) : [relative(base, join(dir, e.name))]))
    .sort();
}

/** Directory modes 0755, times `epoch` (reproducible archives). */
function normalise(root: string, epoch: number): void {
  const visit = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        chmodSync(path, 0o755);
        visit(path);
      }
      utimesSync(path, epoch, epoch);
    }
  };
  visit(root);
  utimesSync(root, epoch, epoch);
}

/** `Depends:` of the executable, from the shared libraries it links (dpkg-shlibdeps). */
function shlibDepends(work: string, root: string): string {
  const srcDir = join(work, 'shlibdeps');
  mkdirSync(join(srcDir, 'debian'), { recursive: true });
  writeFileSync(
    join(srcDir, 'debian', 'control'),
    `Source: ${PACKAGE_NAME}\n\nPackage: ${PACKAGE_NAME}\nArchitecture: any\n`,
  );
  const out = tool('dpkg-shlibdeps', ['-O', join(root, LAYOUT.bin)], { cwd: srcDir });
  const m = /^shlibs:Depends=(.+)$/m.exec(out);
  if (!m) throw new DebBuildError(`dpkg-shlibdeps printed no shlibs:Depends for ${LAYOUT.bin}: ${out.trim()}`);
  return m[1]!.trim();
}

export interface BuildResult {
  deb: string;
  version: string;
  arch: string;
  node: string;
}

export async function buildDeb(
  outDir: string,
  env: NodeJS.ProcessEnv,
  say: (line: string) => void,
): Promise<BuildResult> {
  const manifest = readJson(join(MANAGER_DIR, 'package.json'));
  const version = debianVersion(String(manifest.version), "apps/manager/package.json: 'version'");
  const node = nodeBinary(
    env.POISE_DEB_NODE ?? process.execPath,
    env.POISE_DEB_NODE ? 'POISE_DEB_NODE' : 'the Node.js running the build',
  );
  const epoch = sourceDateEpoch(env);
  const maintainer = maintainerOf(env);
  const repoUrl = String(
    (readJson(join(REPO_ROOT, 'package.json')).repository as { url?: string } | undefined)?.url ?? '',
  );
  const homepage = repoUrl.replace(/^git\+/, '').replace(/\.git$/, '');
  for (const cmd of ['dpkg-deb', 'dpkg-shlibdeps', 'strip']) tool(cmd, ['--version']);

  const work = mkdtempSync(join(tmpdir(), 'poise-deb-'));
  try {
    const root = join(work, 'root');
    say(`poise-manager ${version} (${node.arch}): bundling the daemon with Node.js ${node.version} from ${node.path}`);
    const bundle = await bundleDaemon(String(manifest.version));
    mkdirSync(join(root, dirname(LAYOUT.bin)), { recursive: true });
    writeExecutable(node, bundle, work, join(root, LAYOUT.bin));

    write(root, LAYOUT.unit, packageUnit());
    write(root, LAYOUT.config, readFileSync(join(DEBIAN_DIR, 'config.yaml')));
    write(root, `${LAYOUT.share}/config.schema.json`, readFileSync(join(MANAGER_DIR, 'config.schema.json')));
    cpSync(join(MANAGER_DIR, 'scenarios'), join(root, LAYOUT.share, 'scenarios'), { recursive: true });
    // the status page beside the bundle's believed place (`MODULE_URL_FROM_EXECUTABLE`: dist/cli.js)
    say('building the status page (esbuild: Vega and Vega-Lite bundled, nothing fetched from elsewhere)');
    const page = await buildStatusPage(join(root, LAYOUT.page));
    write(root, LAYOUT.grafana, readFileSync(join(REPO_ROOT, 'tools', 'grafana', 'poise-manager.json')));
    write(root, LAYOUT.man, gzip(manPage(String(manifest.version))));
    write(root, `${LAYOUT.doc}/README.md.gz`, gzip(readFileSync(join(MANAGER_DIR, 'README.md'))));
    write(root, `${LAYOUT.doc}/changelog.gz`, gzip(debianChangelog(changelogEntries(version, epoch), maintainer)));
    write(
      root,
      `${LAYOUT.doc}/copyright`,
      copyrightText({
        homepage,
        maintainer,
        own: {
          license: String(readJson(join(REPO_ROOT, 'package.json')).license),
          text: readFileSync(join(REPO_ROOT, 'LICENSE'), 'utf8'),
        },
        components: [
          nodeComponent(node, env),
          ...bundledComponents(bundle.inputs),
          ...bundledComponents(
            page.packages.map((p) => `${relative(REPO_ROOT, p.dir)}/package.json`),
            `/${LAYOUT.page}/app.js`,
          ),
        ],
      }),
    );
    write(root, LAYOUT.lintianOverrides, readFileSync(join(DEBIAN_DIR, 'lintian-overrides')));

    const files = walk(root);
    const md5sums = files
      .map(
        (f) =>
          `${createHash('md5')
            .update(readFileSync(join(root, f)))
            .digest('hex')}  ${f}\n`,
      )
      .join('');
    const installedSizeKiB =
      files.reduce((sum, f) => sum + Math.ceil(statSync(join(root, f)).size / 1024), 0) +
      4 * new Set(files.map(dirname)).size;
    // procps: /bin/kill, which the unit's ExecReload= runs
    const depends = `${shlibDepends(work, root)}, procps`;
    write(
      root,
      'DEBIAN/control',
      controlText({ version, arch: node.arch, maintainer, installedSizeKiB, depends, homepage }),
    );
    write(root, 'DEBIAN/md5sums', md5sums);
    write(root, 'DEBIAN/conffiles', readFileSync(join(DEBIAN_DIR, 'conffiles')));
    for (const script of ['postinst', 'prerm', 'postrm'])
      write(root, `DEBIAN/${script}`, readFileSync(join(DEBIAN_DIR, script)), 0o755);
    normalise(root, epoch);

    mkdirSync(outDir, { recursive: true });
    const deb = join(outDir, `${PACKAGE_NAME}_${version}_${node.arch}.deb`);
    say('building the archive (dpkg-deb, xz)');
    tool('dpkg-deb', ['--root-owner-group', '-Zxz', '--build', root, deb], { cwd: work });
    return { deb, version, arch: node.arch, node: node.version };
  } finally {
    if (!env.POISE_KEEP_DEB_ROOT) rmSync(work, { recursive: true, force: true });
    else say(`kept ${work}`);
  }
}

function parseOut(argv: readonly string[]): string {
  let out = join(REPO_ROOT, 'dist', 'deb');
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--out' && argv[i + 1] !== undefined) out = resolve(argv[++i]!);
    else throw new DebBuildError(`usage: pnpm deb [--out <dir>] (got ${JSON.stringify(argv[i])})`);
  }
  return out;
}

async function cli(): Promise<number> {
  try {
    const result = await buildDeb(parseOut(process.argv.slice(2)), process.env, (line) => console.log(line));
    console.log(result.deb);
    return 0;
  } catch (err) {
    if (!(err instanceof DebBuildError)) throw err;
    console.error(`pnpm deb: ${err.message}`);
    return 1;
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(REPO_ROOT, 'tools', 'deb', 'build.ts')) {
  void cli().then((code) => {
    process.exitCode = code;
  });
}
