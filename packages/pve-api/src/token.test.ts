import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, test } from 'vitest';
import { PveApiError } from './errors';
import { ApiToken, readTokenFile, tokenFromEnv } from './token';

const SECRET = 'c0ffee00-1111-2222-3333-444455556666';
const dir = mkdtempSync(join(tmpdir(), 'poise-token-'));

function tokenError(fn: () => unknown): PveApiError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(PveApiError);
    expect((err as PveApiError).code).toBe('bad-token');
    return err as PveApiError;
  }
  throw new Error('expected a bad-token error');
}

describe('ApiToken.parse', () => {
  test.each([
    [`poise@pve!balancer=${SECRET}`, 'poise@pve!balancer'],
    [`  PVEAPIToken=poise@pve!balancer=${SECRET}\n`, 'poise@pve!balancer'],
    [`root@pam!a=b=${SECRET}`, 'root@pam!a=b'], // split at the last '=' like the server
  ])('%j → id %s', (text, id) => {
    const token = ApiToken.parse(text);
    expect(token.tokenId).toBe(id);
    expect(token.authorizationHeader()).toBe(`PVEAPIToken=${id}=${SECRET}`);
  });

  test.each([
    ['', 'is empty'],
    ['   \n', 'is empty'],
    [`poise@pve=${SECRET}`, 'wrong format'], // no token id
    [`poise!balancer=${SECRET}`, 'wrong format'], // no realm
    ['poise@pve!balancer=', 'wrong format'], // no secret
    [`poise@pve!balancer ${SECRET}`, 'white space'],
    [`poise@pve!=${SECRET}`, 'wrong format'],
  ])('%j is refused (%s) without echoing the text', (text, words) => {
    const err = tokenError(() => ApiToken.parse(text, 'the test token'));
    expect(err.message).toContain(words);
    expect(err.message).not.toContain(SECRET);
  });

  test('the secret is in no printed form', () => {
    const token = ApiToken.parse(`poise@pve!balancer=${SECRET}`);
    for (const shown of [
      String(token),
      // eslint-disable-next-line @typescript-eslint/restrict-template-expressions -- what a template literal prints is the point
      `${token}`,
      inspect(token, { depth: 10, showHidden: true }),
      JSON.stringify(token),
      JSON.stringify({ token }),
      Object.keys(token).join(),
    ]) {
      expect(shown).not.toContain(SECRET);
    }
    expect(String(token)).toBe('ApiToken(poise@pve!balancer=[redacted])');
    expect(token.redact(`x ${SECRET} y`)).toBe('x [redacted] y');
  });
});

describe('token from a file or the environment', () => {
  test('a file with a trailing newline', () => {
    const file = join(dir, 'ok');
    writeFileSync(file, `poise@pve!balancer=${SECRET}\n`);
    expect(readTokenFile(file).tokenId).toBe('poise@pve!balancer');
  });

  test.each([
    ['missing', undefined, "token file '<f>' does not exist"],
    ['empty', '', "token file '<f>' is empty"],
    ['garbage', 'hello world', "token file '<f>' contains white space"],
    ['noformat', 'hello', "token file '<f>' has the wrong format"],
  ])('file %s', (name, content, words) => {
    const file = join(dir, name);
    if (content !== undefined) writeFileSync(file, content);
    expect(tokenError(() => readTokenFile(file)).message).toContain(words.replace('<f>', file));
  });

  test('a directory instead of a file', () => {
    expect(tokenError(() => readTokenFile(dir)).message).toContain('cannot be read (EISDIR)');
  });

  test.each([
    [{}, "environment variable 'PVE_API_TOKEN' is not set"],
    [{ PVE_API_TOKEN: '' }, "environment variable 'PVE_API_TOKEN' is empty"],
    [{ PVE_API_TOKEN: 'x' }, "environment variable 'PVE_API_TOKEN' has the wrong format"],
  ])('environment %j', (env, words) => {
    expect(tokenError(() => tokenFromEnv('PVE_API_TOKEN', env)).message).toBe(
      words.includes('wrong format')
        ? `${words}; expected 'USER@REALM!TOKENID=SECRET' (e.g. 'poise@pve!balancer=<uuid>')`
        : words,
    );
  });

  test('environment variable set', () => {
    expect(tokenFromEnv('POISE_T', { POISE_T: `a@pam!b=${SECRET}` }).tokenId).toBe('a@pam!b');
  });
});
