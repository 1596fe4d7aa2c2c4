// The Debian package as an admin gets it: the .deb built by `pnpm deb` (or the one .ci/run built,
// `POISE_DEB=<file>`), its control data, lintian (no error or warning left, no stale override),
// the unit checked by `systemd-analyze verify`, and the package unpacked into a temporary root
// where the executable runs chrooted, at its installed paths: --version, --help, --print-schema,
// --check-config of the shipped config (with a token and a cluster CA put where an admin would),
// and --sim on the bundled scenario.
//
// Needs dpkg-deb (and dpkg-dev, binutils to build), lintian, systemd-analyze, openssl and root
// (chroot). Under CI=true a missing tool fails the test that needs it; elsewhere that test is
// skipped, saying why.
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderHelp } from '../../apps/manager/src/cli/spec';
import { REPO_ROOT } from '../packaging/workspace';
import { LAYOUT } from './build';
import { debianVersion, PACKAGE_NAME } from './control';
import { servePage } from '@poise/test-support/serve';

interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

function run(
  cmd: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(
      cmd,
      args,
      {
        cwd: options.cwd,
        env: options.env ?? process.env,
        timeout: options.timeoutMs ?? 600_000,
        maxBuffer: 64 * 1024 * 1024,
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

function have(cmd: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const CI = process.env.CI === 'true';
const isRoot = process.getuid?.() === 0;
const canBuild = have('dpkg-deb') && have('dpkg-shlibdeps') && have('strip');
/** Run when the tools are here, and always under CI (where their absence is a failure). */
const when = (ok: boolean) => it.runIf(ok || CI);

const managerVersion = String(
  (JSON.parse(readFileSync(join(REPO_ROOT, 'apps/manager/package.json'), 'utf8')) as { version: unknown }).version,
);
const version = debianVersion(managerVersion, 'apps/manager/package.json');

let work = '';
let deb = '';
let root = '';
let control = '';
let setupError: unknown;

function ready(): void {
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows what the setup caught, as caught
  if (setupError) throw setupError;
}

/** The executable in the unpacked root, chrooted there, with a clean environment. */
function poiseManager(args: string[]): Promise<RunResult> {
  return run('chroot', [root, `/${LAYOUT.bin}`, ...args], {
    env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C.UTF-8', TMPDIR: '/tmp' },
    timeoutMs: 300_000,
  });
}

/** The shared libraries the executable links, copied to the same paths in the root (for chroot). */
function copyLibraries(): void {
  const ldd = execFileSync('ldd', [join(root, LAYOUT.bin)], { encoding: 'utf8' });
  for (const m of ldd.matchAll(/(?:=>\s*)?(\/\S+)\s+\(0x/g)) {
    const lib = m[1]!;
    mkdirSync(join(root, dirname(lib)), { recursive: true });
    copyFileSync(lib, join(root, lib));
  }
}

beforeAll(async () => {
  if (!canBuild && !process.env.POISE_DEB) return;
  try {
    work = mkdtempSync(join(tmpdir(), 'poise-deb-test-'));
    if (process.env.POISE_DEB) {
      deb = process.env.POISE_DEB;
    } else {
      const built = await run('pnpm', ['deb', '--out', join(work, 'out')], { cwd: REPO_ROOT, timeoutMs: 1_800_000 });
      if (built.code !== 0) throw new Error(`pnpm deb failed (exit ${built.code}):\n${built.stdout}\n${built.stderr}`);
      deb = built.stdout.trim().split('\n').at(-1)!;
    }
    root = join(work, 'root');
    control = join(work, 'control');
    execFileSync('dpkg-deb', ['-x', deb, root]);
    execFileSync('dpkg-deb', ['-e', deb, control]);
  } catch (err) {
    setupError = err;
  }
}, 1_800_000);

afterAll(() => {
  if (work && !process.env.POISE_KEEP_DEB_TEST) rmSync(work, { recursive: true, force: true });
}, 120_000);

describe(`${PACKAGE_NAME}.deb`, () => {
  when(canBuild)('is named and versioned after @poise/manager, with the Depends of its executable', () => {
    ready();
    const fields = readFileSync(join(control, 'control'), 'utf8');
    const field = (name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(fields)?.[1];
    expect(field('Package')).toBe(PACKAGE_NAME);
    expect(field('Version')).toBe(version);
    expect(deb.endsWith(`/${PACKAGE_NAME}_${version}_${field('Architecture')}.deb`), deb).toBe(true);
    expect(field('Depends')).toMatch(/^libc6 \(>= [\d.]+\)/);
    expect(readFileSync(join(control, 'conffiles'), 'utf8')).toBe(`/${LAYOUT.config}\n`);
  });

  when(canBuild)('ships the executable, unit, conffile, schema, man page, copyright and changelog', async () => {
    ready();
    const list = (await run('dpkg-deb', ['-c', deb])).stdout;
    for (const path of [
      LAYOUT.bin,
      LAYOUT.unit,
      LAYOUT.config,
      LAYOUT.man,
      `${LAYOUT.share}/config.schema.json`,
      `${LAYOUT.share}/scenarios/three-nodes-unbalanced/cmdlist`,
      `${LAYOUT.doc}/copyright`,
      `${LAYOUT.doc}/changelog.gz`,
      `${LAYOUT.page}/index.html`,
      `${LAYOUT.page}/app.js`,
      `${LAYOUT.page}/app.css`,
      `${LAYOUT.page}/third-party-licenses.txt`,
      LAYOUT.grafana,
    ]) {
      expect(list, path).toContain(` ./${path}\n`);
    }
    const changelog = gunzipSync(readFileSync(join(root, LAYOUT.doc, 'changelog.gz'))).toString();
    expect(changelog.split('\n')[0]).toBe(`${PACKAGE_NAME} (${version}) unstable; urgency=medium`);
    expect(readFileSync(join(root, LAYOUT.grafana), 'utf8')).toBe(
      readFileSync(join(REPO_ROOT, 'tools', 'grafana', 'poise-manager.json'), 'utf8'),
    );
    // the page's bundled packages are named in the copyright file
    expect(readFileSync(join(root, LAYOUT.doc, 'copyright'), 'utf8')).toMatch(
      new RegExp(`vega \\d+\\.\\d+\\.\\d+ \\(npm\\), bundled into /${LAYOUT.page}/app\\.js`),
    );
    const man = gunzipSync(readFileSync(join(root, LAYOUT.man))).toString();
    expect(man).toMatch(/^\.TH /m);
    expect(man).toContain(managerVersion);
  });

  when(canBuild)('does not enable or start the service when installed; the shipped config observes', () => {
    ready();
    for (const script of ['postinst', 'prerm', 'postrm']) {
      const text = readFileSync(join(control, script), 'utf8');
      // try-restart (restart only if running) is what an upgrade may do
      expect(text, script).not.toMatch(/systemctl\s+(--\S+\s+)*(enable|start|restart|reenable)\b/);
      expect(text, script).not.toMatch(/deb-systemd-helper\s+(--\S+\s+)*(enable|reenable)\b/);
      expect(text, script).not.toMatch(/deb-systemd-invoke\s+(--\S+\s+)*(start|restart)\b/);
    }
    expect(readFileSync(join(root, LAYOUT.config), 'utf8')).toMatch(/^mode: observe$/m);
  });

  when(canBuild && have('lintian'))(
    'passes lintian: no error, no warning, no unused override',
    async () => {
      ready();
      const r = await run('lintian', ['--display-info', '--tag-display-limit', '0', deb], { timeoutMs: 1_200_000 });
      const lines = `${r.stdout}${r.stderr}`.split('\n');
      expect(lines.filter((l) => /^[EW]: /.test(l))).toEqual([]);
      expect(lines.filter((l) => /unused-override|mismatched-override|malformed-override/.test(l))).toEqual([]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
    },
    1_200_000,
  );

  when(canBuild && have('systemd-analyze'))('has a unit that systemd-analyze verify finds nothing in', async () => {
    ready();
    // verify checks that ExecStart= exists on this machine: a copy that names the unpacked one
    const unit = join(work, 'unit', 'poise-manager.service');
    mkdirSync(dirname(unit), { recursive: true });
    writeFileSync(
      unit,
      readFileSync(join(root, LAYOUT.unit), 'utf8').replaceAll(`=/${LAYOUT.bin} `, `=${join(root, LAYOUT.bin)} `),
    );
    expect(readFileSync(unit, 'utf8')).toContain(`ExecStart=${join(root, LAYOUT.bin)} `);
    const r = await run('systemd-analyze', ['verify', unit]);
    expect(`${r.stdout}${r.stderr}`.trim()).toBe('');
    expect(r.code).toBe(0);
  });

  describe('unpacked into a temporary root, run from there', () => {
    const canChroot = canBuild && isRoot && have('openssl');
    beforeAll(() => {
      if (!root || setupError || !canChroot) return;
      copyLibraries();
      mkdirSync(join(root, 'tmp'), { recursive: true });
      chmodSync(join(root, 'tmp'), 0o1777);
      // what an admin adds before the first run: the API token, and on a node the cluster CA and
      // pmxcfs's lock directory (--check-config checks that the lock can work)
      writeFileSync(
        join(root, 'etc/poise-manager/token'),
        'poise@pve!balancer=4b6f7f2e-1c2d-4e5f-8a9b-0c1d2e3f4a5b\n',
        { mode: 0o600 },
      );
      mkdirSync(join(root, 'etc/pve/priv/lock'), { recursive: true });
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-keyout',
          join(work, 'ca.key'),
          '-subj',
          '/CN=Proxmox Virtual Environment',
          '-days',
          '2',
          '-out',
          join(root, 'etc/pve/pve-root-ca.pem'),
        ],
        { stdio: 'ignore' },
      );
    }, 120_000);

    when(canChroot)('--version prints the package version', async () => {
      ready();
      const r = await poiseManager(['--version']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trim()).toBe(`poise-manager ${managerVersion}`);
    });

    when(canChroot)('--help prints the help of the command-line definition', async () => {
      ready();
      const r = await poiseManager(['--help']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trimEnd()).toBe(renderHelp().trimEnd());
    });

    when(canChroot)('--print-schema prints the schema the package ships', async () => {
      ready();
      const r = await poiseManager(['--print-schema']);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual(
        JSON.parse(readFileSync(join(root, LAYOUT.share, 'config.schema.json'), 'utf8')),
      );
    });

    when(canChroot)('--check-config finds the shipped config valid, in observe mode', async () => {
      ready();
      const r = await poiseManager(['--check-config', '--config', `/${LAYOUT.config}`]);
      expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
      expect(r.stdout).toContain(`config /${LAYOUT.config} is valid`);
      expect(r.stdout).toMatch(/env pve, mode observe/);
      expect(r.stdout).toContain('API token poise@pve!balancer from');
    });

    when(canChroot)('--sim --listen serves the status page it carries', async () => {
      ready();
      const served = await servePage('chroot', [root, `/${LAYOUT.bin}`, '--sim', '--listen', '127.0.0.1:0']);
      try {
        const page = await fetch(served.url);
        expect(page.status).toBe(200);
        expect(await page.text()).toContain('src="ui/app.js"');
        const script = await fetch(new URL('ui/app.js', served.url));
        expect(script.status).toBe(200);
        expect(Buffer.from(await script.arrayBuffer())).toEqual(readFileSync(join(root, LAYOUT.page, 'app.js')));
      } finally {
        await served.stop();
      }
    });

    when(canChroot)('--sim runs the bundled scenario to its end', async () => {
      ready();
      const r = await poiseManager(['--sim']);
      expect(r.code, r.stderr).toBe(0);
      // piped: one JSON object a line
      const lines = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { event: string; msg: string });
      expect(lines[0]!.msg).toContain(`poise-manager ${managerVersion} starting: env sim`);
      expect(lines.at(-1)!.msg).toMatch(
        /^stopped after \d+ rounds; motions this run: ([1-9]\d*) requested, \1 succeeded, 0 failed$/,
      );
    });
  });
});
