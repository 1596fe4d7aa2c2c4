import { describe, expect, it } from 'vitest';
import {
  controlText,
  copyrightLines,
  copyrightText,
  debianChangelog,
  debianVersion,
  maintainerOf,
  parseChangesetsChangelog,
  referToCommonApache,
  rfc2822,
} from './control';
import { compareVersions, nodeBinary } from './sea';
import { sourceDateEpoch } from './build';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

describe('debianVersion', () => {
  it.each([
    ['0.1.0', '0.1.0'],
    ['1.2.3', '1.2.3'],
    // semver sorts a pre-release before its release; Debian does with '~'
    ['1.0.0-rc.1', '1.0.0~rc.1'],
    ['2.0.0-next-3', '2.0.0~next.3'],
    ['1.0.0+build.5', '1.0.0'],
  ])('%s → %s', (semver, deb) => {
    expect(debianVersion(semver, 'x')).toBe(deb);
  });

  it.each(['', '1.2', 'v1.2.3', '1.2.3 ', '1.2.3-', 'latest'])('refuses %j, naming the field and the value', (bad) => {
    expect(() => debianVersion(bad, "apps/manager/package.json: 'version'")).toThrow(
      `apps/manager/package.json: 'version': expected a semver version (1.2.3 or 1.2.3-rc.1), got ${JSON.stringify(bad)}`,
    );
  });
});

describe('maintainerOf', () => {
  it('defaults, or takes DEBFULLNAME and DEBEMAIL', () => {
    expect(maintainerOf({})).toBe('poise developers <poise@example.org>');
    expect(maintainerOf({ DEBFULLNAME: 'Ada Admin', DEBEMAIL: 'ada@example.net' })).toBe('Ada Admin <ada@example.net>');
  });

  it('refuses an address or a name that would break the field', () => {
    expect(() => maintainerOf({ DEBEMAIL: 'not an address' })).toThrow(
      'DEBEMAIL: expected an e-mail address, got "not an address"',
    );
    expect(() => maintainerOf({ DEBFULLNAME: 'Eve <eve@x>' })).toThrow(
      "DEBFULLNAME: expected a name without '<', '>' or line breaks",
    );
  });
});

describe('the Debian changelog from the changesets CHANGELOG.md', () => {
  const markdown = [
    '# @poise/manager',
    '',
    '## 0.2.0',
    '',
    '### Minor Changes',
    '',
    '- 1a2b3c4: unknown policy keys are errors',
    '  (as in the rest of the schema)',
    '',
    '### Patch Changes',
    '',
    '- Updated dependencies [1a2b3c4]',
    '  - @poise/policy@0.2.0',
    '',
    '## 0.1.1',
    '',
    '### Patch Changes',
    '',
    '- 0123456789abcdef0123456789abcdef01234567: a closed stdout ends it quietly',
    '',
  ].join('\n');

  it('reads each release and its items, hashes dropped, continuation lines joined', () => {
    expect(parseChangesetsChangelog(markdown)).toEqual([
      {
        version: '0.2.0',
        items: [
          'unknown policy keys are errors (as in the rest of the schema)',
          'Updated dependencies [1a2b3c4] @poise/policy@0.2.0',
        ],
      },
      { version: '0.1.1', items: ['a closed stdout ends it quietly'] },
    ]);
  });

  it('writes Debian entries, wrapped under 80 columns', () => {
    const long = 'word '.repeat(40).trim();
    const text = debianChangelog([{ version: '0.2.0', items: [long], date: rfc2822(0) }], 'A <a@b.c>');
    const lines = text.split('\n');
    expect(lines[0]).toBe('poise-manager (0.2.0) unstable; urgency=medium');
    expect(lines.every((l) => l.length <= 80)).toBe(true);
    expect(lines.filter((l) => l.startsWith('  * '))).toHaveLength(1);
    expect(text).toContain(' -- A <a@b.c>  Thu, 01 Jan 1970 00:00:00 +0000\n');
  });

  it('refuses a time that is not a time', () => {
    expect(() => rfc2822(Number.NaN)).toThrow('expected a time in epoch seconds, got NaN');
  });
});

describe('the copyright file', () => {
  const apache = [
    'Copyright (c) 2015 Example Corp',
    '',
    '                                 Apache License',
    '                           Version 2.0, January 2004',
    '   TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION',
    '   1. Definitions.',
    '   END OF TERMS AND CONDITIONS',
    'after',
  ].join('\n');

  it('points at /usr/share/common-licenses for each full Apache-2.0 text, keeping the notices', () => {
    const out = referToCommonApache(`${apache}\n${apache}`);
    expect(out).not.toContain('TERMS AND CONDITIONS FOR USE');
    expect(out.match(/\/usr\/share\/common-licenses\/Apache-2\.0/g)).toHaveLength(2);
    expect(out.match(/Copyright \(c\) 2015 Example Corp/g)).toHaveLength(2);
    expect(out.match(/^after$/gm)).toHaveLength(2);
  });

  it('finds copyright lines, not the word in prose', () => {
    expect(
      copyrightLines(
        'MIT License\n\nCopyright (c) 2020 A. Person\nThe above copyright notice shall be included\nCopyright notice: x',
      ),
    ).toEqual(['2020 A. Person']);
  });

  it('is DEP-5, with every component and its license', () => {
    const text = copyrightText({
      homepage: 'https://example.org/poise',
      maintainer: 'A <a@b.c>',
      own: { license: 'AGPL-3.0-or-later', text: 'line 1\n\nline 3' },
      components: [
        { files: 'node_modules/x/*', copyright: ['2020 X'], license: 'MIT', text: 'mit text', comment: 'x 1.0.0' },
        { files: 'node_modules/y/*', copyright: [], license: 'Apache-2.0', text: undefined, comment: 'y 2.0.0' },
      ],
    });
    expect(text).toMatch(/^Format: https:\/\/www\.debian\.org\/doc\/packaging-manuals\/copyright-format\/1\.0\/$/m);
    expect(text).toContain(
      'Files: *\nCopyright: the poise developers\nLicense: AGPL-3.0-or-later\n line 1\n .\n line 3\n',
    );
    expect(text).toContain('Files: node_modules/x/*\nCopyright: 2020 X\nLicense: MIT\n mit text\nComment: x 1.0.0');
    expect(text).toContain(
      'Files: node_modules/y/*\nCopyright: the node_modules/y/* authors\nLicense: Apache-2.0\n On Debian systems the full text of the license is in\n /usr/share/common-licenses/Apache-2.0.',
    );
  });
});

describe('control', () => {
  it('carries the fields, the description indented', () => {
    const text = controlText({
      version: '0.1.0',
      arch: 'amd64',
      maintainer: 'A <a@b.c>',
      installedSizeKiB: 88000,
      depends: 'libc6 (>= 2.34)',
      homepage: 'https://h',
    });
    expect(text).toMatch(/^Package: poise-manager\nVersion: 0\.1\.0\nArchitecture: amd64\n/);
    expect(
      text
        .split('\n')
        .filter((l) => l !== '' && !/^[A-Z][\w-]*: /.test(l))
        .every((l) => l.startsWith(' ')),
    ).toBe(true);
  });
});

describe('the Node.js binary the executable is made from', () => {
  it('compares versions numerically', () => {
    expect(compareVersions('20.9.0', '20.18.1')).toBeLessThan(0);
    expect(compareVersions('22.0.0', '20.18.1')).toBeGreaterThan(0);
    expect(compareVersions('20.18.1', '20.18.1')).toBe(0);
  });

  it('refuses what is not Node.js, an old one, or one that cannot carry an application', () => {
    const dir = mkdtempSync(join(tmpdir(), 'poise-deb-node-'));
    try {
      const fake = (name: string, printed: string) => {
        const file = join(dir, name);
        writeFileSync(file, `#!/bin/sh\necho '${printed}'\n`);
        chmodSync(file, 0o755);
        return file;
      };
      expect(() => nodeBinary(join(dir, 'missing'), 'POISE_DEB_NODE')).toThrow(
        `POISE_DEB_NODE: '${join(dir, 'missing')}' does not run as Node.js`,
      );
      expect(() => nodeBinary(fake('garbled', 'twenty x64'), 'POISE_DEB_NODE')).toThrow(
        "printed 'twenty x64' for its version",
      );
      expect(() => nodeBinary(fake('old', '18.19.0 x64'), 'POISE_DEB_NODE')).toThrow('Node.js 18.19.0 at');
      expect(() => nodeBinary(fake('odd-arch', '20.20.0 sparc'), 'POISE_DEB_NODE')).toThrow(
        "no Debian architecture is known for Node.js arch 'sparc'",
      );
      // a script that answers like Node.js but has no SEA fuse
      expect(() => nodeBinary(fake('no-fuse', '20.20.0 x64'), 'POISE_DEB_NODE')).toThrow(
        'cannot carry an application (no unused SEA fuse',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SOURCE_DATE_EPOCH', () => {
  it('is whole seconds', () => {
    expect(sourceDateEpoch({ SOURCE_DATE_EPOCH: '1764612000' })).toBe(1764612000);
    expect(() => sourceDateEpoch({ SOURCE_DATE_EPOCH: 'yesterday' })).toThrow(
      'SOURCE_DATE_EPOCH: expected whole seconds since 1970, got "yesterday"',
    );
  });
});
