import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BalanceCandidate, BalanceContext, GuestConfig } from '@poise/policy';
import { describe, expect, it } from 'vitest';
import { judgeMigratability, parsePropertyString } from './index';
import { type MigratableState, migratableFilter } from './migratable';

const codes = (config: GuestConfig, options?: Parameters<typeof judgeMigratability>[1]) =>
  judgeMigratability(config, options).blockers.map((b) => `${b.key}:${b.code}`);

describe('parsePropertyString', () => {
  it('gives the first bare item to the default key', () => {
    expect([...parsePropertyString('local:iso/d.iso,media=cdrom,size=4G', 'file')]).toEqual([
      ['file', 'local:iso/d.iso'],
      ['media', 'cdrom'],
      ['size', '4G'],
    ]);
    expect([...parsePropertyString('file=ceph:vm-1-disk-0,shared=1', 'file')]).toEqual([
      ['file', 'ceph:vm-1-disk-0'],
      ['shared', '1'],
    ]);
  });
});

describe('judgeMigratability: a VM configuration', () => {
  it.each<{ name: string; config: GuestConfig; expected: string[] }>([
    {
      name: 'an empty cd-rom and a disk on shared storage',
      config: { ide2: 'none,media=cdrom', scsi0: 'ceph:vm-101-disk-0,size=32G', memory: 2048 },
      expected: [],
    },
    {
      name: 'a local ISO in the cd-rom',
      config: { ide2: 'local:iso/d.iso,media=cdrom' },
      expected: ['ide2:local-cdrom'],
    },
    { name: 'an ISO on shared storage', config: { ide2: 'cephfs:iso/d.iso,media=cdrom' }, expected: [] },
    {
      name: 'a cloud-init drive on local storage (regenerated on the target)',
      config: { ide2: 'local-lvm:vm-211-cloudinit,media=cdrom' },
      expected: [],
    },
    { name: "the host's cd-rom drive", config: { ide2: 'cdrom,media=cdrom' }, expected: ['ide2:host-cdrom'] },
    { name: 'an ISO by host path', config: { sata1: '/mnt/iso/d.iso,media=cdrom' }, expected: ['sata1:local-cdrom'] },
    {
      name: 'local disks of every kind, unused ones included',
      config: {
        virtio0: 'local-lvm:vm-1-disk-0',
        efidisk0: 'local-lvm:vm-1-disk-1,efitype=4m',
        tpmstate0: 'local-zfs:vm-1-disk-2,version=v2.0',
        unused0: 'local:1/vm-1-disk-3.qcow2',
      },
      expected: ['efidisk0:local-disk', 'tpmstate0:local-disk', 'unused0:local-disk', 'virtio0:local-disk'],
    },
    { name: 'a local disk marked shared=1', config: { scsi0: 'local-lvm:vm-1-disk-0,shared=1' }, expected: [] },
    { name: 'a host block device', config: { scsi1: '/dev/disk/by-id/ata-X' }, expected: ['scsi1:local-disk'] },
    {
      name: 'pci passthrough, mapped or not',
      config: { hostpci0: 'mapping=gpu', hostpci1: '0000:01:00.0,pcie=1' },
      expected: ['hostpci0:pci-passthrough', 'hostpci1:pci-passthrough'],
    },
    {
      name: 'usb passthrough, but not spice redirection',
      config: { usb0: 'spice', usb1: 'host=spice,usb3=1', usb2: 'host=0bda:b023', usb3: 'mapping=bt' },
      expected: ['usb2:usb-passthrough', 'usb3:usb-passthrough'],
    },
    {
      name: 'amd sev and intel tdx',
      config: { 'amd-sev': 'type=snp', 'intel-tdx': 'type=tdx' },
      expected: ['amd-sev:amd-sev', 'intel-tdx:intel-tdx'],
    },
    {
      name: 'a serial socket is fine, a host serial port is not',
      config: { serial0: 'socket', serial1: '/dev/ttyS0', parallel0: '/dev/parport0' },
      expected: ['parallel0:parallel-device', 'serial1:serial-device'],
    },
    { name: 'virtiofs', config: { virtiofs0: 'dirid=share,cache=auto' }, expected: ['virtiofs0:virtiofs'] },
    {
      name: 'names that are object internals are ordinary keys',
      config: JSON.parse('{"__proto__":"x","toString":"y","constructor":"z"}'),
      expected: [],
    },
  ])('$name → $expected', ({ config, expected }) => {
    expect(codes(config)).toEqual(expected);
    expect(judgeMigratability(config).migratable).toBe(expected.length === 0);
  });

  it('says what and where, lower-case', () => {
    expect(judgeMigratability({ ide2: 'local:iso/d.iso,media=cdrom', hostpci0: '01:00.0' }).blockers).toEqual([
      { key: 'hostpci0', code: 'pci-passthrough', message: "pci passthrough '01:00.0' (hostpci0)" },
      { key: 'ide2', code: 'local-cdrom', message: "local cd-rom image 'local:iso/d.iso' (ide2)" },
    ]);
  });

  it('asks the host which storages are shared, and falls back to local/local-* for unknown ones', () => {
    const config = { scsi0: 'tank:vm-1-disk-0', scsi1: 'local-lvm:vm-1-disk-1', scsi2: 'nfs:1/vm-1-disk-2.raw' };
    // default: only local and local-* are local
    expect(codes(config)).toEqual(['scsi1:local-disk']);
    const storage = new Map([
      ['tank', false],
      ['local-lvm', true],
    ]);
    expect(codes(config, { sharedStorage: (s) => storage.get(s) })).toEqual(['scsi0:local-disk']);
  });
});

describe('judgeMigratability: a container configuration (restart migration copies local volumes)', () => {
  it.each<{ config: GuestConfig; expected: string[] }>([
    { config: { rootfs: 'local-lvm:vm-200-disk-0,size=8G', mp0: 'local-lvm:vm-200-disk-1,mp=/data' }, expected: [] },
    { config: { rootfs: 'local-lvm:vm-200-disk-0', mp0: '/srv/data,mp=/data' }, expected: ['mp0:bind-mount'] },
    { config: { rootfs: 'local-lvm:vm-200-disk-0', mp1: '/srv/nfs,mp=/nfs,shared=1' }, expected: [] },
    {
      config: { rootfs: 'local-lvm:vm-200-disk-0', dev0: '/dev/ttyUSB0,mode=0660' },
      expected: ['dev0:device-passthrough'],
    },
  ])('$config → $expected', ({ config, expected }) => {
    expect(codes(config)).toEqual(expected);
  });
});

// Real guest configurations captured from PVE 9.2 by other projects, read in place
// (../shared/pve-api-samples or $POISE_PVE_API_SAMPLES; required under CI=true).
const SAMPLES = process.env.POISE_PVE_API_SAMPLES
  ? resolve(process.env.POISE_PVE_API_SAMPLES)
  : resolve(dirname(fileURLToPath(import.meta.url)), '../../../../shared/pve-api-samples');

describe('real configurations (pve-api-samples)', () => {
  it('the samples are available', () => {
    if (!existsSync(SAMPLES) && process.env.CI === 'true')
      throw new Error(`pve api samples not found at '${SAMPLES}' (set POISE_PVE_API_SAMPLES)`);
  });

  const read = (file: string): GuestConfig => {
    const json = JSON.parse(readFileSync(join(SAMPLES, file), 'utf8')) as { data?: GuestConfig } & GuestConfig;
    return json.data ?? json;
  };
  it.skipIf(!existsSync(SAMPLES)).each([
    // devices probe: local-lvm disks everywhere, a mapped PCI device, a mapped and a host USB device
    [
      'nodes-node-qemu-vmid-config-passthrough__flutter-server-box.json',
      [
        'efidisk0:local-disk',
        'hostpci0:pci-passthrough',
        'scsi1:local-disk',
        'tpmstate0:local-disk',
        'unused0:local-disk',
        'usb0:usb-passthrough',
        'usb1:usb-passthrough',
        'virtio0:local-disk',
      ],
    ],
    // an empty cd-rom (none) is fine; the system disk is on local-lvm
    ['nodes-node-qemu-vmid-config__flutter-server-box.json', ['scsi0:local-disk']],
    // a cloud-init drive on local-lvm is fine; serial0 is a socket
    ['nodes-node-qemu-vmid-config__pvecli.json', ['scsi0:local-disk']],
  ])('%s', (file, expected) => {
    expect(codes(read(file))).toEqual(expected);
    // with local-lvm known to be shared, only the devices remain
    expect(codes(read(file), { sharedStorage: () => true }).every((c) => !c.endsWith('local-disk'))).toBe(true);
  });
});

describe('migratable filter', () => {
  const stage = migratableFilter();
  const CONFIGS: Record<string, GuestConfig> = {
    'vm:101': { ide2: 'local:iso/d.iso,media=cdrom', scsi0: 'ceph:vm-101-disk-0' },
    'vm:102': { scsi0: 'ceph:vm-102-disk-0' },
    'ct:200': { rootfs: 'local-lvm:vm-200-disk-0', mp0: '/srv,mp=/srv' },
  };
  const ctx = (over: Partial<BalanceContext> = {}): BalanceContext => ({
    now: 100,
    motionInFlight: false,
    imbalance: () => 0.5,
    candidates: () => [],
    score: () => [],
    guestConfig: (sid) => CONFIGS[sid],
    ...over,
  });
  const c = (leader: string, resources = [leader]): BalanceCandidate => ({ leader, resources, targets: ['node2'] });
  const INITIAL: MigratableState = { reported: [] };

  it('drops bundles with a blocked member and tells about each guest once', () => {
    const candidates = [c('vm:101'), c('vm:102'), c('vm:103', ['vm:103', 'ct:200']), c('vm:104')];
    const first = stage.run(ctx(), { candidates }, INITIAL);
    expect('plan' in first && first.plan.candidates!.map((x) => x.leader)).toEqual(['vm:102', 'vm:104']);
    expect(first.notices).toEqual([
      {
        code: 'not-migratable',
        severity: 'warning',
        message: "ct:200 cannot be migrated: bind mount of host path '/srv' (mp0)",
      },
      {
        code: 'not-migratable',
        severity: 'warning',
        message: "vm:101 cannot be migrated: local cd-rom image 'local:iso/d.iso' (ide2)",
      },
      { code: 'config-unknown', severity: 'info', message: 'no configuration for vm:103: treated as migratable' },
      { code: 'config-unknown', severity: 'info', message: 'no configuration for vm:104: treated as migratable' },
    ]);
    const second = stage.run(ctx({ now: 120 }), { candidates }, first.state);
    expect(second.notices).toEqual([]);
  });

  it('stops when nothing can move, naming the guests and why', () => {
    const out = stage.run(ctx(), { candidates: [c('vm:101')] }, INITIAL);
    expect(out).toMatchObject({
      code: 'not-migratable',
      stop: "not migratable: vm:101 (local cd-rom image 'local:iso/d.iso' (ide2))",
    });
  });

  it('prefers the host verdict, and checks it', () => {
    const verdict = {
      migratable: false,
      blockers: [{ key: 'node', code: 'precheck', message: "precheck: local resource 'x'" }],
    };
    const out = stage.run(
      ctx({ migratability: (sid) => (sid === 'vm:102' ? verdict : undefined) }),
      { candidates: [c('vm:102'), c('vm:104')] },
      INITIAL,
    );
    expect('plan' in out && out.plan.candidates!.map((x) => x.leader)).toEqual(['vm:104']);
    const bad = () =>
      stage.run(ctx({ migratability: () => ({ migratable: 'no' }) as never }), { candidates: [c('vm:102')] }, INITIAL);
    expect(bad).toThrow(expect.objectContaining({ code: 'invalid-input' }));
  });

  it('a guest whose config is fixed is forgotten and would be told again if it breaks again', () => {
    const first = stage.run(ctx(), { candidates: [c('vm:101'), c('vm:102')] }, INITIAL).state;
    expect(first.reported.map((r) => r.sid)).toEqual(['vm:101']);
    const fixed = stage.run(
      ctx({ guestConfig: () => ({ scsi0: 'ceph:x' }) }),
      { candidates: [c('vm:101')] },
      first,
    ).state;
    expect(fixed.reported).toEqual([]);
  });

  it('needs guest configurations or verdicts; validates its state', () => {
    expect(() => stage.run({ ...ctx(), guestConfig: undefined }, { candidates: [c('vm:101')] }, INITIAL)).toThrow(
      "stage 'migratable' needs 'ctx.guestConfig()'",
    );
    expect(() => stage.validateState!({ reported: [{ sid: 'vm:1', key: 'x', at: 'now' }] })).toThrow(
      "stage 'migratable': state field 'reported.0.at' must be a finite number, got \"now\"",
    );
  });
});
