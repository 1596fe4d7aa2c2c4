/**
 * The texts of the Debian package that are derived from the repository, as pure functions: the
 * version, `DEBIAN/control`, the Debian changelog (from the changesets CHANGELOG.md of
 * `@poise/manager`) and the machine-readable copyright file. `build.ts` gathers the inputs.
 */
import { DebBuildError } from './errors';

export const PACKAGE_NAME = 'poise-manager';

/** Who the package names as its maintainer; `DEBFULLNAME` / `DEBEMAIL` override it (as for dch). */
export const DEFAULT_MAINTAINER = { name: 'poise developers', email: 'poise@example.org' };

/** Longest line of a changelog entry's text (lintian warns above 80 columns). */
const CHANGELOG_WIDTH = 78;

/**
 * The Debian version of a semver version: a pre-release sorts before its release in semver,
 * and `~` gives Debian the same order (`1.0.0-rc.1` → `1.0.0~rc.1`); build metadata is dropped.
 * `where` names the field in error messages.
 */
export function debianVersion(semver: string, where: string): string {
  const m = /^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(semver);
  if (!m)
    throw new DebBuildError(`${where}: expected a semver version (1.2.3 or 1.2.3-rc.1), got ${JSON.stringify(semver)}`);
  const [, major, minor, patch, pre] = m;
  return `${major}.${minor}.${patch}${pre === undefined ? '' : `~${pre.replace(/-/g, '.')}`}`;
}

export interface ControlFields {
  version: string;
  arch: string;
  maintainer: string;
  installedSizeKiB: number;
  depends: string;
  homepage: string;
}

/** `DEBIAN/control` of the package. */
export function controlText(f: ControlFields): string {
  return `${[
    `Package: ${PACKAGE_NAME}`,
    `Version: ${f.version}`,
    `Architecture: ${f.arch}`,
    `Maintainer: ${f.maintainer}`,
    `Installed-Size: ${f.installedSizeKiB}`,
    `Depends: ${f.depends}`,
    'Section: admin',
    'Priority: optional',
    `Homepage: ${f.homepage}`,
    'Description: balancer for Proxmox VE HA resources',
    ' poise-manager balances the guests of a Proxmox VE 8 or 9 cluster. Each',
    ' round it reads the cluster through its API, runs the poise balancer policy',
    " (the HA manager's own balancer, with optional stability and pressure",
    ' stages) and either logs what it would do (mode observe, as shipped) or asks',
    ' the HA manager to migrate one guest at a time (mode act), following each',
    ' motion to its outcome.',
    ' .',
    ' The executable carries its own Node.js runtime, so the package runs on',
    ' Proxmox VE 8 (Debian 12) and 9 (Debian 13) nodes and on plain Debian hosts.',
    ' Installing it does not start the service.',
  ].join('\n')}\n`;
}

/** `Name <email>` from the environment (`DEBFULLNAME`, `DEBEMAIL`) or the default. */
export function maintainerOf(env: NodeJS.ProcessEnv): string {
  const name = env.DEBFULLNAME?.trim() || DEFAULT_MAINTAINER.name;
  const email = env.DEBEMAIL?.trim() || DEFAULT_MAINTAINER.email;
  if (!/^[^\s<>@]+@[^\s<>@]+$/.test(email))
    throw new DebBuildError(`DEBEMAIL: expected an e-mail address, got ${JSON.stringify(email)}`);
  if (/[<>\n]/.test(name))
    throw new DebBuildError(
      `DEBFULLNAME: expected a name without '<', '>' or line breaks, got ${JSON.stringify(name)}`,
    );
  return `${name} <${email}>`;
}

/** One version's notes from a changesets CHANGELOG.md, as flat items. */
export interface ReleaseNotes {
  version: string;
  items: string[];
}

/**
 * The releases of a changesets CHANGELOG.md (`## 1.2.0`, then `- <hash>: text` items under
 * `### Minor Changes` etc.), newest first as written. An item's continuation lines and nested
 * items are joined into it; the commit hash prefix is dropped.
 */
export function parseChangesetsChangelog(markdown: string): ReleaseNotes[] {
  const releases: ReleaseNotes[] = [];
  let current: ReleaseNotes | undefined;
  let item: string[] | undefined;
  const flush = () => {
    if (current && item) current.items.push(item.join(' ').replace(/\s+/g, ' ').trim());
    item = undefined;
  };
  for (const line of markdown.split('\n')) {
    const heading = /^## (\S+)\s*$/.exec(line);
    if (heading) {
      flush();
      current = { version: heading[1]!, items: [] };
      releases.push(current);
      continue;
    }
    if (!current || /^#/.test(line)) {
      flush();
      continue;
    }
    const top = /^- (?:[0-9a-f]{7,40}: )?(.*)$/.exec(line);
    if (top) {
      flush();
      item = [top[1]!];
    } else if (item && line.trim() !== '') {
      item.push(line.trim().replace(/^- /, ''));
    }
  }
  flush();
  return releases;
}

/** `text` wrapped at `width` columns, the first line prefixed by `first`, the others by `rest`. */
function wrap(text: string, first: string, rest: string, width: number): string[] {
  const lines: string[] = [];
  let line = first;
  for (const word of text.split(' ')) {
    const prefix = lines.length === 0 ? first : rest;
    if (line.length > prefix.length && line.length + 1 + word.length > width) {
      lines.push(line);
      line = rest + word;
    } else {
      line = line.length > prefix.length ? `${line} ${word}` : `${line}${word}`;
    }
  }
  lines.push(line);
  return lines;
}

export interface ChangelogEntry {
  version: string;
  items: string[];
  /** RFC 2822 date of the entry. */
  date: string;
}

/** The Debian changelog (native package: `/usr/share/doc/<pkg>/changelog.gz`), newest first. */
export function debianChangelog(entries: readonly ChangelogEntry[], maintainer: string): string {
  return entries
    .map((e) => {
      const items = e.items.length > 0 ? e.items : ['No release notes.'];
      const body = items.flatMap((i) => wrap(i, '  * ', '    ', CHANGELOG_WIDTH));
      return [
        `${PACKAGE_NAME} (${e.version}) unstable; urgency=medium`,
        '',
        ...body,
        '',
        ` -- ${maintainer}  ${e.date}`,
        '',
      ].join('\n');
    })
    .join('\n');
}

/** An RFC 2822 date in UTC (`Mon, 01 Dec 2026 18:00:00 +0000`), as Debian changelogs write it. */
export function rfc2822(epochSeconds: number): string {
  if (!Number.isFinite(epochSeconds) || epochSeconds < 0)
    throw new DebBuildError(`expected a time in epoch seconds, got ${epochSeconds}`);
  const d = new Date(epochSeconds * 1000);
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const two = (n: number) => String(n).padStart(2, '0');
  return `${days[d.getUTCDay()]}, ${two(d.getUTCDate())} ${months[d.getUTCMonth()]} ${d.getUTCFullYear()} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`;
}

/** A component of the executable and the license it comes under. */
export interface LicensedComponent {
  /** `Files:` pattern (a path of the repository, or a name for the Node.js runtime). */
  files: string;
  /** Copyright lines found in its license text; `the <name> authors` when there are none. */
  copyright: string[];
  /** SPDX-like short name (`MIT`, `ISC`, `Apache-2.0`). */
  license: string;
  /** Full license text, or `undefined` when `/usr/share/common-licenses` has it. */
  text: string | undefined;
  comment: string;
}

/** Licenses whose full text Debian ships in /usr/share/common-licenses (name there). */
export const COMMON_LICENSES: Record<string, string> = {
  'Apache-2.0': 'Apache-2.0',
  'GPL-2.0': 'GPL-2',
  'GPL-3.0': 'GPL-3',
  'LGPL-2.1': 'LGPL-2.1',
  'LGPL-3.0': 'LGPL-3',
  'MPL-2.0': 'MPL-2.0',
  'CC0-1.0': 'CC0-1.0',
};

/** The `Copyright` lines of a license text. */
export function copyrightLines(licenseText: string): string[] {
  const lines = licenseText
    .split('\n')
    .map((l) => l.trim())
    .filter(
      (l) =>
        /^(copyright\b|\(c\)|©)/i.test(l) &&
        !/^copyright (notice|holders?|owner|license)\b/i.test(l) &&
        !/^copyright \[yyyy\]/i.test(l),
    );
  return [...new Set(lines.map((l) => l.replace(/^copyright\s*(\(c\)|©)?\s*/i, '')))];
}

/**
 * `text` with each full copy of the Apache License 2.0 (from its title to `END OF TERMS AND
 * CONDITIONS`) replaced by a pointer to Debian's copy, as Debian policy §12.5 asks; the notices
 * around it (who licenses what under it) are kept as written.
 */
export function referToCommonApache(text: string): string {
  return text.replace(
    /^([ \t]*)Apache License\s+Version 2\.0, January 2004[\s\S]*?END OF TERMS AND CONDITIONS[^\n]*$/gm,
    (_match, indent: string) =>
      `${indent}The Apache License, Version 2.0: on Debian systems its full text is in\n${indent}/usr/share/common-licenses/Apache-2.0.`,
  );
}

/** A license text as a DEP-5 field continuation: each line indented, blank lines as ` .`. */
function fieldText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/\t/g, '        ')
    .trim()
    .split('\n')
    .map((l) => (l.trim() === '' ? ' .' : ` ${l.trimEnd()}`))
    .join('\n');
}

export interface CopyrightInput {
  homepage: string;
  maintainer: string;
  /** poise's own license: short name and full text. */
  own: { license: string; text: string };
  components: readonly LicensedComponent[];
}

/** `/usr/share/doc/poise-manager/copyright` in the machine-readable format (DEP-5). */
export function copyrightText(input: CopyrightInput): string {
  const paragraphs = [
    [
      'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/',
      'Upstream-Name: poise',
      `Upstream-Contact: ${input.maintainer}`,
      `Source: ${input.homepage}`,
      'Comment: /usr/bin/poise-manager is a Node.js single executable application:',
      ' the Node.js runtime carrying the poise-manager daemon, bundled from the',
      ' repository (apps/manager, packages/*) with the npm packages listed below.',
    ].join('\n'),
    ['Files: *', 'Copyright: the poise developers', `License: ${input.own.license}`, fieldText(input.own.text)].join(
      '\n',
    ),
    ...input.components.map((c) => {
      const copyright = c.copyright.length > 0 ? c.copyright : [`the ${c.files} authors`];
      const license =
        c.text === undefined
          ? `License: ${c.license}\n On Debian systems the full text of the license is in\n /usr/share/common-licenses/${COMMON_LICENSES[c.license]}.`
          : `License: ${c.license}\n${fieldText(c.text)}`;
      return [`Files: ${c.files}`, `Copyright: ${copyright.join('\n ')}`, license, `Comment: ${c.comment}`].join('\n');
    }),
  ];
  return `${paragraphs.join('\n\n')}\n`;
}
