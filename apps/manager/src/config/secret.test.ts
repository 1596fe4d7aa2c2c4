import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadToken } from './secret';

const SECRET = '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';
const TOKEN = `poise@pve!balancer=${SECRET}`;

describe('API token (parsed by @poise/pve-api, the one parser)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'poise-token-'));

  it('reads a file, trims the newline, keeps the id and hides the secret everywhere but the header', () => {
    const file = join(dir, 'token');
    writeFileSync(file, `${TOKEN}\n`);
    chmodSync(file, 0o600);
    const warnings: string[] = [];
    const { token, origin } = loadToken({ file }, {}, warnings);
    expect(token.authorizationHeader()).toBe(`PVEAPIToken=${TOKEN}`);
    expect(token.tokenId).toBe('poise@pve!balancer');
    expect(origin).toBe(`file '${file}'`);
    expect(warnings).toEqual([]);
    // eslint-disable-next-line @typescript-eslint/restrict-template-expressions -- what a template literal prints is the point
    for (const shown of [String(token), JSON.stringify({ token }), inspect(token), `${token}`]) {
      expect(shown).not.toContain(SECRET);
    }
    expect(token.redact(`said ${TOKEN}`)).toBe('said poise@pve!balancer=[redacted]');
  });

  it('accepts the form with the header name, as @poise/pve-api and its README do', () => {
    const file = join(dir, 'with-prefix');
    writeFileSync(file, `PVEAPIToken=${TOKEN}\n`, { mode: 0o600 });
    expect(loadToken({ file }).token.authorizationHeader()).toBe(`PVEAPIToken=${TOKEN}`);
    expect(loadToken({ env: 'T' }, { T: `PVEAPIToken=${TOKEN}` }).token.tokenId).toBe('poise@pve!balancer');
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
    expect(loadToken({ env: 'PVE_TOKEN' }, { PVE_TOKEN: ` ${TOKEN} ` }).token.tokenId).toBe('poise@pve!balancer');
  });

  it.each([
    [{ env: 'MISSING' }, {}, "API token: environment variable 'MISSING' is not set"],
    [{ file: '/nonexistent/token' }, {}, "API token: token file '/nonexistent/token' does not exist"],
    [{ file: dir }, {}, `API token: token file '${dir}' cannot be read (EISDIR)`],
    [{}, {}, "no API token configured ('pve.token-file' or 'pve.token-env')"],
    [
      { env: 'T' },
      { T: SECRET },
      "API token: environment variable 'T' has the wrong format; expected 'USER@REALM!TOKENID=SECRET'",
    ],
    [
      { env: 'T' },
      { T: `root@pam=${SECRET}` },
      "API token: environment variable 'T' has the wrong format; expected 'USER@REALM!TOKENID=SECRET'",
    ],
    [{ env: 'T' }, { T: '' }, "API token: environment variable 'T' is empty"],
  ])('refuses %j without showing the value', (source, env, message) => {
    expect(() => loadToken(source, env as NodeJS.ProcessEnv)).toThrow(message);
    try {
      loadToken(source, env);
    } catch (err) {
      expect((err as Error).message).not.toContain(SECRET);
      expect(err).toMatchObject({ code: 'invalid-token' });
    }
  });

  it('accepts the shapes PVE issues', () => {
    expect(loadToken({ env: 'T' }, { T: 'root@pam!t1=abc' }).token.tokenId).toBe('root@pam!t1');
    expect(loadToken({ env: 'T' }, { T: 'svc-poise@pve!my_token-2=8a7b' }).token.tokenId).toBe(
      'svc-poise@pve!my_token-2',
    );
  });
});
