import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PveClient } from './client';
import { actionPrivilege, grantsPrivilege } from './privileges';
import { accessPermissionsSchema } from './schemas';
import {
  effectivePrivileges,
  type FakePveServer,
  type FakePveServerOptions,
  type FakeRequest,
  generateCertificates,
  permissionsReply,
  privilegeRefusal,
  type ServedAcl,
  type ServedCluster,
  startFakePveServer,
  type TestCertificates,
} from './server';
import { ApiToken } from './token';
import { decode } from './wire';

const TOKEN_TEXT = 'poise@pve!balancer=5ec2e7aa-0000-4bad-b0b0-123456789abc';

function perms(entries: Record<string, Record<string, boolean>>) {
  return new Map(Object.entries(entries).map(([path, p]) => [path, new Map(Object.entries(p))]));
}

describe('grantsPrivilege: a reply of GET /access/permissions read for one need', () => {
  it.each([
    ['the path itself, propagated', { '/vms/101': { 'VM.Migrate': true } }, '/vms/101', true],
    ['the path itself, not propagated: still held there', { '/vms/101': { 'VM.Migrate': false } }, '/vms/101', true],
    ['the path itself without it', { '/vms/101': { 'VM.Audit': true } }, '/vms/101', false],
    ['an ancestor, propagated', { '/vms': { 'VM.Migrate': true } }, '/vms/101', true],
    ['an ancestor, not propagated', { '/vms': { 'VM.Migrate': false } }, '/vms/101', false],
    ['the root, propagated', { '/': { 'VM.Migrate': true } }, '/vms/101', true],
    // the nearest listed path decides: /vms (without it) replaces what / propagates
    [
      'a nearer ancestor without it hides the root',
      { '/': { 'VM.Migrate': true }, '/vms': { 'VM.Audit': true } },
      '/vms/101',
      false,
    ],
    ['nothing listed', {}, '/', false],
    ['an empty entry for the path (asked with path=)', { '/': {} }, '/', false],
    ['the root asked, held', { '/': { 'Sys.Console': true } }, '/', true],
  ])('%s', (_name, reply, path, held) => {
    const privilege = path === '/' ? 'Sys.Console' : 'VM.Migrate';
    expect(grantsPrivilege(perms(reply), { path, privilege })).toBe(held);
  });

  it('each action names the privilege the spec gives it', () => {
    expect(actionPrivilege('POST /cluster/ha/resources/{sid}/migrate')).toEqual({
      path: '/',
      privilege: 'Sys.Console',
    });
    expect(actionPrivilege('POST /cluster/ha/resources/{sid}/relocate')).toEqual({
      path: '/',
      privilege: 'Sys.Console',
    });
    expect(actionPrivilege('POST /nodes/{node}/{type}/{vmid}/migrate', { vmid: 101 })).toEqual({
      path: '/vms/101',
      privilege: 'VM.Migrate',
    });
  });
});

describe('the served ACL (the fake pveproxy)', () => {
  const served = (acl: ServedAcl[] | undefined) => ({ acl }) as unknown as ServedCluster;
  const request = (query: Record<string, string>) => ({ query: new URLSearchParams(query) }) as unknown as FakeRequest;
  const acl: ServedAcl[] = [
    { path: '/', privileges: ['Sys.Audit', 'VM.Audit'], propagate: true },
    { path: '/vms', privileges: ['VM.Audit', 'VM.Migrate'], propagate: true },
    { path: '/vms/666', privileges: ['VM.Audit'], propagate: false },
    { path: '/nodes', privileges: ['Sys.Console'], propagate: false },
  ];

  it('walks the tree from / down: a nearer entry replaces, a non-propagating one reaches only its own path', () => {
    expect([...effectivePrivileges(served(acl), '/vms/101')]).toEqual([
      ['VM.Audit', true],
      ['VM.Migrate', true],
    ]);
    expect([...effectivePrivileges(served(acl), '/vms/666')]).toEqual([['VM.Audit', false]]);
    expect([...effectivePrivileges(served(acl), '/nodes')]).toEqual([['Sys.Console', false]]);
    expect([...effectivePrivileges(served(acl), '/nodes/node1')]).toEqual([
      ['Sys.Audit', true],
      ['VM.Audit', true],
    ]);
    // no ACL given: an administrator's token
    expect(effectivePrivileges(served(undefined), '/vms/1').get('Sys.Console')).toBe(true);
  });

  it('GET /access/permissions: one path with path=, else every ACL path; the client schema reads both', () => {
    const one = permissionsReply(served(acl), request({ path: '/vms/101' }));
    expect(one).toEqual({ data: { '/vms/101': { 'VM.Audit': 1, 'VM.Migrate': 1 } } });
    const none = permissionsReply(served([]), request({ path: '/' }));
    expect(none).toEqual({ data: { '/': {} } });
    const all = decode(accessPermissionsSchema, permissionsReply(served(acl), request({})).data, {
      endpoint: 'GET /access/permissions',
    });
    expect([...all.keys()]).toEqual(['/', '/nodes', '/vms', '/vms/666']);
    expect(grantsPrivilege(all, { path: '/vms/101', privilege: 'VM.Migrate' })).toBe(true);
    expect(grantsPrivilege(all, { path: '/vms/666', privilege: 'VM.Migrate' })).toBe(false);
    expect(grantsPrivilege(all, { path: '/', privilege: 'Sys.Console' })).toBe(false);
    // another user's permissions need Sys.Audit on /access
    expect(permissionsReply(served(acl), request({ userid: 'root@pam' }))).toMatchObject({ status: 403 });
  });

  it('an action without its privilege is the 403 pveproxy sends before the handler runs', () => {
    expect(privilegeRefusal(served(acl), '/', 'Sys.Console')).toEqual({
      status: 403,
      statusText: 'Permission check failed (/, Sys.Console)',
    });
    expect(privilegeRefusal(served(acl), '/vms/101', 'VM.Migrate')).toBeUndefined();
  });

  it.each([
    ['a propagate flag that is not 0 or 1', { '/': { 'VM.Migrate': 2 } }, "data['/']['VM.Migrate']"],
    ['a path mapped to a list', { '/': ['VM.Migrate'] }, "data['/']"],
    ['a list', [], 'data'],
  ])('a reply with %s is a bad reply naming the field', (_name, data, field) => {
    expect(() => decode(accessPermissionsSchema, data, { endpoint: 'GET /access/permissions' })).toThrow(
      expect.objectContaining({ code: 'bad-reply', field: field.replace(/'/g, '"') }),
    );
  });
});

describe('PveClient.permissions', () => {
  let certs: TestCertificates;
  let server: FakePveServer | undefined;
  let client: PveClient | undefined;
  beforeAll(async () => {
    certs = await generateCertificates();
  });
  afterEach(async () => {
    await client?.close();
    await server?.close();
  });
  async function serve(options: Pick<FakePveServerOptions, 'routes'>) {
    server = await startFakePveServer({
      tls: { cert: certs.certPem, key: certs.keyPem },
      tokens: [TOKEN_TEXT],
      ...options,
    });
    client = new PveClient({ baseUrls: [server.url], token: ApiToken.parse(TOKEN_TEXT), tls: { ca: certs.caPem } });
    return { server, client };
  }

  it('asks for one path (path=) and reads the map', async () => {
    const { server, client } = await serve({
      routes: { 'GET /access/permissions': { data: { '/vms/101': { 'VM.Migrate': 1, 'VM.Audit': 0 } } } },
    });
    const got = await client.permissions('/vms/101');
    expect(grantsPrivilege(got, { path: '/vms/101', privilege: 'VM.Migrate' })).toBe(true);
    expect(got.get('/vms/101')?.get('VM.Audit')).toBe(false);
    expect(server.requests.map((r) => `${r.path}?${r.query.toString()}`)).toEqual([
      '/access/permissions?path=%2Fvms%2F101',
    ]);
  });

  it('an older release without the endpoint: not-implemented', async () => {
    const { client } = await serve({});
    await expect(client.permissions('/')).rejects.toMatchObject({
      code: 'not-implemented',
      endpoint: 'GET /access/permissions',
    });
  });

  it.each([['vms/101'], ['/vms/ 101'], ['']])('a bad ACL path %j is refused before sending', async (path) => {
    const { server, client } = await serve({});
    await expect(client.permissions(path)).rejects.toMatchObject({ code: 'bad-option' });
    expect(server.requests).toEqual([]);
  });
});
