import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import type { z } from 'zod';
import { requireServiceStatus } from './client';
import { PveApiError } from './errors';
import {
  certificatesInfoSchema,
  clusterOptionsSchema,
  clusterResourcesSchema,
  clusterStatusSchema,
  guestConfigSchema,
  guestRrdSchema,
  guestStatusSchema,
  haGroupsSchema,
  haManagerStatusSchema,
  haMotionReplySchema,
  haResourcesSchema,
  haRulesSchema,
  haStatusCurrentSchema,
  migratePrecheckSchema,
  nodeGuestsSchema,
  nodeRrdSchema,
  nodeStatusSchema,
  taskListSchema,
  taskStatusSchema,
  upidSchema,
  versionSchema,
} from './schemas';
import type {
  ClusterGuestResource,
  ClusterNodeResource,
  GuestConfig,
  HaManagerStatus,
  HaStatusCurrent,
  MigratePrecheck,
  NodeRrdPoint,
  NodeStatus,
} from './types';
import { decode } from './wire';

// Real replies captured by other projects (../shared/pve-api-samples, SOURCES.md), read in place.
const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const dir = resolve(REPO_ROOT, process.env.POISE_PVE_API_SAMPLES ?? '../shared/pve-api-samples');
const present = existsSync(dir);
const files = present
  ? readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort()
  : [];

/** The schema of a sample, chosen from the endpoint part of its name (`<endpoint>__<source>.json`). */
function schemaFor(file: string): z.ZodType | undefined {
  const endpoint = file.split('__')[0]!;
  const rules: [RegExp, () => z.ZodType][] = [
    [/^version$/, () => versionSchema],
    [/^cluster-resources(-type-\w+)?$/, () => clusterResourcesSchema],
    [/^cluster-status$/, () => clusterStatusSchema],
    [/^cluster-options$/, () => clusterOptionsSchema],
    [/^cluster-ha-status-current$/, () => haStatusCurrentSchema],
    [/^cluster-ha-status-manager_status$/, () => haManagerStatusSchema],
    [/^cluster-ha-resources$/, () => haResourcesSchema],
    [/^cluster-ha-rules$/, () => haRulesSchema],
    [/^cluster-ha-groups$/, () => haGroupsSchema],
    [/^POST-cluster-ha-resources-sid-(migrate|relocate)$/, () => haMotionReplySchema],
    [/^nodes-node-status$/, () => nodeStatusSchema],
    [/^nodes-node-rrddata(-\w+)?$/, () => nodeRrdSchema],
    [/^nodes-node-(qemu|lxc)-vmid-rrddata(-\w+)?$/, () => guestRrdSchema],
    [/^nodes-node-qemu(-full)?$/, () => nodeGuestsSchema('qemu', 'node')],
    [/^nodes-node-lxc$/, () => nodeGuestsSchema('lxc', 'node')],
    [/^nodes-node-qemu-vmid-config(-[\w-]+)?$/, () => guestConfigSchema('qemu', 100)],
    [/^nodes-node-lxc-vmid-config(-[\w-]+)?$/, () => guestConfigSchema('lxc', 100)],
    [/^nodes-node-(qemu|lxc)-vmid-migrate-GET$/, () => migratePrecheckSchema],
    [/^POST-.*-upid$/, () => upidSchema],
    [/^POST-nodes-node-(qemu|lxc)-vmid-migrate$/, () => upidSchema],
    [/^nodes-node-tasks-upid-status$/, () => taskStatusSchema],
    [/^nodes-node-tasks$/, () => taskListSchema],
    [/^nodes-node-(qemu|lxc)-vmid-status-current$/, () => guestStatusSchema('qemu', 'node', 100)],
    [/^nodes-node-certificates-info$/, () => certificatesInfoSchema],
  ];
  return rules.find(([re]) => re.test(endpoint))?.[1]();
}

/** The `data` of a sample: files stored "data only" (SOURCES.md) have no envelope. */
function dataOf(file: string): unknown {
  const json = JSON.parse(readFileSync(join(dir, file), 'utf8')) as unknown;
  return json !== null && typeof json === 'object' && !Array.isArray(json) && 'data' in json ? json.data : json;
}

function parse<T>(file: string, schema: z.ZodType<T>): T {
  return decode(schema, dataOf(file), { endpoint: file });
}

/** Every number in a parsed value, with its path (to prove no NaN/Infinity comes out). */
function numbers(value: unknown, path = '', out: [string, number][] = []): [string, number][] {
  if (typeof value === 'number') out.push([path, value]);
  else if (value instanceof Map) for (const [k, v] of value) numbers(v, `${path}.${String(k)}`, out);
  else if (Array.isArray(value)) value.forEach((v, i) => numbers(v, `${path}[${i}]`, out));
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) numbers(v, `${path}.${k}`, out);
  return out;
}

describe('real replies of ../shared/pve-api-samples', () => {
  test('the samples are available', () => {
    if (!present && process.env.CI === 'true') {
      throw new Error(`pve api samples not found at '${dir}' (set POISE_PVE_API_SAMPLES); required under CI=true`);
    }
  });

  describe.skipIf(!present)('each sample', () => {
    test.each(files)('%s parses, with finite numbers only', (file) => {
      const schema = schemaFor(file);
      expect(schema, `no schema known for sample '${file}'`).toBeDefined();
      const value = parse(file, schema!);
      for (const [path, n] of numbers(value)) expect(Number.isFinite(n), `${file}${path} = ${n}`).toBe(true);
      if (file.startsWith('cluster-ha-status-manager_status')) {
        // where the capture lacks the service table, following a motion fails and names the field
        const status = value as HaManagerStatus;
        if (status.serviceStatus === undefined) {
          expect(() => requireServiceStatus(status)).toThrow(PveApiError);
          expect(() => requireServiceStatus(status)).toThrow(/'data\.manager_status\.service_status' is missing/);
        }
      }
    });
  });

  const has = (file: string) => present && existsSync(join(dir, file));

  test.skipIf(!has('cluster-resources__pvecli-full.json'))(
    'cluster resources (PVE 9.2): memhost, 0/1 template, tags, storage and other rows',
    () => {
      const rows = parse('cluster-resources__pvecli-full.json', clusterResourcesSchema);
      const vm211 = rows.find((r) => r.id === 'qemu/211') as ClusterGuestResource;
      expect(vm211).toMatchObject({
        kind: 'guest',
        type: 'qemu',
        vmid: 211,
        sid: 'vm:211',
        running: true,
        memBytes: 442601472,
        memHostBytes: 587669504,
        maxCpus: 2,
        template: false,
        tags: ['lab'],
        pool: 'lab',
      });
      expect((rows.find((r) => r.id === 'qemu/9000') as ClusterGuestResource).template).toBe(true);
      expect((rows.find((r) => r.id === 'lxc/120') as ClusterGuestResource).memHostBytes).toBe(0);
      const node = rows.find((r) => r.kind === 'node') as ClusterNodeResource;
      expect(node).toMatchObject({
        node: 'pve',
        online: true,
        cpuUsage: 0.00611754581437246,
        maxCpus: 16,
        memBytes: 3965440000,
        maxMemBytes: 33041162240,
        haState: undefined,
      });
      expect(rows.find((r) => r.id === 'storage/pve/local')).toMatchObject({
        kind: 'storage',
        shared: false,
        content: ['iso', 'vztmpl', 'import', 'backup'],
      });
      expect(rows.find((r) => r.id === '/pool/lab')).toEqual({ kind: 'other', type: 'pool', id: '/pool/lab' });
      expect(rows.find((r) => r.id === 'network/pve/zone/localnetwork')).toEqual({
        kind: 'other',
        type: 'network',
        id: 'network/pve/zone/localnetwork',
      });
    },
  );

  test.skipIf(!has('cluster-resources-type-vm__pvecli.json'))(
    'a guest that never ran has no usage stats: undefined, not 0',
    () => {
      const vm213 = parse('cluster-resources-type-vm__pvecli.json', clusterResourcesSchema).find(
        (r) => r.id === 'qemu/213',
      ) as ClusterGuestResource;
      expect(vm213).toMatchObject({
        running: false,
        maxCpus: 2,
        maxMemBytes: 2147483648,
        cpuUsage: undefined,
        memBytes: undefined,
        template: undefined,
        uptimeSeconds: undefined,
      });
    },
  );

  test.skipIf(!has('cluster-resources__go-proxmox.json'))(
    'PVE 7.4 multi-node: no memhost (undefined), four online nodes',
    () => {
      const rows = parse('cluster-resources__go-proxmox.json', clusterResourcesSchema);
      expect(
        rows
          .filter((r) => r.kind === 'node')
          .map((r) => r.node)
          .sort(),
      ).toEqual(['node1', 'node2', 'node3', 'node4']);
      expect(
        rows.filter((r): r is ClusterGuestResource => r.kind === 'guest').every((g) => g.memHostBytes === undefined),
      ).toBe(true);
    },
  );

  test.skipIf(!has('cluster-resources-type-vm__yanboyang713-blog.json'))(
    'memhost and mem may exceed maxmem (accepted as sent)',
    () => {
      const rows = parse('cluster-resources-type-vm__yanboyang713-blog.json', clusterResourcesSchema).filter(
        (r): r is ClusterGuestResource => r.kind === 'guest',
      );
      const vm112 = rows.find((r) => r.vmid === 112)!;
      expect(vm112.memBytes! > vm112.maxMemBytes).toBe(true); // 34390517760 > 34359738368
      expect(rows.find((r) => r.vmid === 103)!.memHostBytes).toBe(2201249792);
    },
  );

  test.skipIf(!has('cluster-ha-status-current__pegaprox.json'))(
    'HA status: node state read from free text, quorate integer 1 → true',
    () => {
      const s = parse<HaStatusCurrent>('cluster-ha-status-current__pegaprox.json', haStatusCurrentSchema);
      expect(s.quorum).toEqual({ node: 'pve-node-a1', quorate: true });
      expect(s.master).toMatchObject({ node: 'pve-node-b1', state: 'active', timestamp: 1789062521 });
      expect(s.fencing).toEqual({ node: 'pve-node-b1', armedState: 'armed', resourceMode: undefined });
      const lrm = new Map(s.lrm.map((l) => [l.node, [l.state, l.watchdog]]));
      expect(lrm.get('pve-node-a1')).toEqual(['idle', 'standby']);
      expect(lrm.get('pve-node-a2')).toEqual(['active', 'active']);
      expect(lrm.get('pve-node-c1')).toEqual(['maintenance', 'standby']);
      expect(s.services).toEqual([
        {
          sid: 'vm:100',
          node: 'pve-node-a2',
          state: 'started',
          crmState: 'started',
          requestState: 'started',
          failback: true,
          maxRestart: 2,
          maxRelocate: 3,
          autoRebalance: false,
          comment: 'test guest',
        },
      ]);
    },
  );

  test.skipIf(!has('cluster-ha-status-manager_status__pegaprox.json'))(
    'manager status: quorate "1" → true, node states, maintenance requests; no service table',
    () => {
      const s = parse<HaManagerStatus>('cluster-ha-status-manager_status__pegaprox.json', haManagerStatusSchema);
      expect(s.quorum).toEqual({ node: 'pve-node-a1', quorate: true });
      expect(s.masterNode).toBe('pve-node-b1');
      expect(s.nodeStatus.get('pve-node-c1')).toBe('maintenance');
      expect(s.nodeRequest.get('pve-node-c2')).toEqual({ maintenance: true });
      expect(s.nodeRequest.get('pve-node-a1')).toEqual({ maintenance: false });
      expect(s.lrmStatus.get('pve-node-a2')).toMatchObject({ mode: 'active', state: 'active', timestamp: 1789062567 });
      expect(s.serviceStatus).toBeUndefined();
    },
  );

  test.skipIf(!has('cluster-options__proxmox-apiclient-go.json'))(
    'cluster options without crs: nothing set (cluster defaults apply)',
    () => {
      const o = parse('cluster-options__proxmox-apiclient-go.json', clusterOptionsSchema);
      expect(o.crsSet).toBe(false);
      expect(o.crs.haAutoRebalance).toBeUndefined();
      expect(o.maxWorkers).toBeUndefined();
    },
  );

  test.skipIf(!has('nodes-node-rrddata-hour__vobot-apps.json'))(
    'node RRD (PVE 9): PSI in percent, fractional bytes',
    () => {
      const [p] = parse<NodeRrdPoint[]>('nodes-node-rrddata-hour__vobot-apps.json', nodeRrdSchema);
      expect(p!.pressure).toEqual({
        cpuSome: 0.0666666666666667,
        ioSome: 1.115,
        ioFull: 1.11333333333333,
        memorySome: 0,
        memoryFull: 0,
      });
      expect(p).toMatchObject({
        time: 1766014200,
        maxCpus: 72,
        memUsedBytes: 57576897877.3333,
        memAvailableBytes: 77461721770.6667,
        loadAverage: 3.44,
      });
    },
  );

  test.skipIf(!has('nodes-node-status__proxploy-app.json'))(
    'node status: loadavg strings → numbers, mhz string → number',
    () => {
      const s = parse<NodeStatus>('nodes-node-status__proxploy-app.json', nodeStatusSchema);
      expect(s.loadAverage).toEqual([0, 0, 0]);
      expect(s.cpuInfo).toEqual({
        cpus: 20,
        cores: 14,
        sockets: 1,
        model: '13th Gen Intel(R) Core(TM) i5-13500T',
        mhz: 800,
      });
      expect(s.memory.availableBytes).toBe(31145582592);
      expect(s.ioWait).toBe(0.000273693493697447);
    },
  );

  test.skipIf(!has('nodes-node-status__pvecli.json'))(
    'node status trimmed by its author: swap and wait are undefined',
    () => {
      const s = parse<NodeStatus>('nodes-node-status__pvecli.json', nodeStatusSchema);
      expect(s.swap).toBeUndefined();
      expect(s.ioWait).toBeUndefined();
      expect(s.loadAverage).toEqual([0.02, 0.02, 0]);
    },
  );

  test.skipIf(!has('nodes-node-qemu-vmid-config__pvecli.json'))(
    'qemu config: memory string → MiB, serial0 socket does not block',
    () => {
      const c = parse<GuestConfig>('nodes-node-qemu-vmid-config__pvecli.json', guestConfigSchema('qemu', 211));
      expect(c).toMatchObject({ memoryMiB: 2048, cores: 2, template: false, name: 'lab-app-01', tags: ['lab'] });
      expect(c.migrationBlockers).toEqual([]);
    },
  );

  test.skipIf(!has('nodes-node-qemu-vmid-config-passthrough__flutter-server-box.json'))(
    'qemu config with passthrough: host usb blocks, mapped pci only limits live migration',
    () => {
      const c = parse<GuestConfig>(
        'nodes-node-qemu-vmid-config-passthrough__flutter-server-box.json',
        guestConfigSchema('qemu', 9921),
      );
      expect(c.memoryMiB).toBe(256);
      expect(c.migrationBlockers.map((b) => [b.key, b.scope])).toEqual([
        ['hostpci0', 'live'],
        ['usb1', 'always'],
      ]);
    },
  );

  test.skipIf(!has('nodes-node-qemu-vmid-migrate-GET__pvecli.json'))(
    'qemu precheck: underscored keys, local disks (cloud-init without size)',
    () => {
      const m = parse<MigratePrecheck>('nodes-node-qemu-vmid-migrate-GET__pvecli.json', migratePrecheckSchema);
      expect(m).toMatchObject({
        running: true,
        allowedNodes: [],
        localResources: [],
        mappedResources: [],
        hasDbusVmstate: true,
      });
      expect(m.localDisks).toEqual([
        {
          volid: 'local-lvm:vm-211-cloudinit',
          sizeBytes: undefined,
          cdrom: true,
          unused: false,
          shared: false,
          drive: 'ide2',
        },
        {
          volid: 'local-lvm:vm-211-disk-0',
          sizeBytes: 3221225472,
          cdrom: false,
          unused: false,
          shared: false,
          drive: 'scsi0',
        },
      ]);
    },
  );

  test.skipIf(!has('nodes-node-lxc-vmid-migrate-GET__pvecli.json'))(
    'lxc precheck: hyphenated keys read like the underscored ones',
    () => {
      const m = parse<MigratePrecheck>('nodes-node-lxc-vmid-migrate-GET__pvecli.json', migratePrecheckSchema);
      expect(m).toMatchObject({ running: false, allowedNodes: [], localDisks: [] });
      expect(m.notAllowedNodes.size).toBe(0);
    },
  );

  test.skipIf(!has('POST-nodes-node-qemu-vmid-status-start-upid__pvecli.json'))('task id with a token user', () => {
    expect(parse('POST-nodes-node-qemu-vmid-status-start-upid__pvecli.json', upidSchema)).toEqual({
      upid: 'UPID:pve:0000790E:0010102A:6A6CD601:qmstart:211:automation@pve!pvectl:',
      node: 'pve',
      pid: 0x790e,
      pstart: 0x10102a,
      startTime: 0x6a6cd601,
      type: 'qmstart',
      id: '211',
      user: 'automation@pve!pvectl',
    });
  });
});
