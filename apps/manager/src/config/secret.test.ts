import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ApiToken, loadToken } from './secret';

const SECRET = '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';
const TOKEN = `poise@pve!balancer=${SECRET}`;

describe('API token', () => {
  const dir = mkdtempSync(join(tmpdir(), 'poise-token-'));

  it('reads a file, trims the newline, keeps the id and hides the value everywhere but reveal()', () => {
    const file = join(dir, 'token');
    writeFileSync(file, `${TOKEN}\n`);
    chmodSync(file, 0o600);
    const warnings: string[] = [];
    const token = loadToken({ file }, {}, warnings);
    expect(token.reveal()).toBe(TOKEN);
    expect(token.id).toBe('poise@pve!balancer');
    expect(warnings).toEqual([]);
    // eslint-disable-next-line @typescript-eslint/restrict-template-expressions -- what a template literal prints is the point
    for (const shown of [String(token), JSON.stringify({ token }), inspect(token), `${token}`]) {
      expect(shown).not.toContain(SECRET);
      expect(shown).toContain('redacted');
    }
    expect(token.secrets()).toEqual([TOKEN, SECRET]);
  });

  it('warns when the file is readable by others', () => {
    const file = join(dir, 'open');
    writeFileSync(file, TOKEN);
    chmodSync(file, 0o644);
    const warnings: string[] = [];
    loadToken({ file }, {}, warnings);
    expect(warnings).toEqual([`API token file '${file}' is readable by group or others (mode 0644); use chmod 600`]);
  });

  it('reads an environment variable', () => {
    expect(loadToken({ env: 'PVE_TOKEN' }, { PVE_TOKEN: ` ${TOKEN} ` }).reveal()).toBe(TOKEN);
  });

  it.each([
    [{ env: 'MISSING' }, {}, "the environment variable 'MISSING' holding the API token is not set"],
    [{ file: '/nonexistent/token' }, {}, "cannot read the API token file '/nonexistent/token' (ENOENT)"],
    [{}, {}, "no API token configured ('pve.token-file' or 'pve.token-env')"],
    [
      { env: 'T' },
      { T: SECRET },
      "API token from environment variable 'T': expected USER@REALM!TOKENID=SECRET (36 characters read, not shown)",
    ],
    // no '!TOKENID': 'root@pam=' (9) + the 36-character secret = 45 characters
    [
      { env: 'T' },
      { T: `root@pam=${SECRET}` },
      "API token from environment variable 'T': expected USER@REALM!TOKENID=SECRET (45 characters read, not shown)",
    ],
  ])('refuses %j without showing the value', (source, env, message) => {
    expect(() => loadToken(source, env as NodeJS.ProcessEnv)).toThrow(message);
    try {
      loadToken(source, env);
    } catch (err) {
      expect((err as Error).message).not.toContain(SECRET);
    }
  });

  it('accepts the shapes PVE issues', () => {
    expect(new ApiToken('root@pam!t1=abc', 'x').id).toBe('root@pam!t1');
    expect(new ApiToken('svc-poise@pve!my_token-2=8a7b', 'x').id).toBe('svc-poise@pve!my_token-2');
  });
});
