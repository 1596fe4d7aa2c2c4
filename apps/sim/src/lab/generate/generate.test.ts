import { mkdtempSync, readFileSync, readdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCase, simulate } from '@poise/sim';
import { buildCmdlist, generateCase, overcommitFactor, slotAtOrAfter, writeCase } from './generate';
import { parseDuration, validateParams } from './params';

const gen = (params: object) => generateCase(validateParams(params, 'p.yaml'), 'p.yaml');
const tmp = (p: string) => mkdtempSync(join(tmpdir(), p));

describe('slots and delays (spec §1.4)', () => {
  it('slot times are 20, 120, 220, ...', () => {
    expect([0, 20, 21, 120, 121, 7200].map(slotAtOrAfter)).toEqual([20, 20, 120, 120, 220, 7220]);
  });
  it('consecutive slots need no delay; a gap of g adds delay g − 80 to the earlier slot', () => {
    // 120 → 520: delay 320 at 120; the next list runs at the first round end ≥ 440 (440) + 80 = 520
    const events = new Map([
      [20, ['a']],
      [120, ['b']],
      [520, ['c']],
      [620, ['d']],
    ]);
    expect(buildCmdlist(events)).toEqual([['a'], ['b', 'delay 320'], ['c'], ['d']]);
  });
  it('the simulator runs each list at its planned time', () => {
    const dir = tmp('poise-gen-slots-');
    const files = gen({
      duration: 3600,
      guests: { count: 2 },
      maintenance: { count: 1, duration: 900 },
      failures: { count: 1, duration: 600, kind: 'network' },
    });
    writeCase(dir, files);
    const cmds = JSON.parse(files.get('cmdlist')!) as string[][];
    // replay the slot arithmetic: list i at t_i; a delay d at t moves the next list to t + 20·⌈d/20⌉ + 80
    let t = 20;
    const planned: [number, string][] = [];
    for (const list of cmds) {
      let next = t + 100;
      for (const c of list) {
        const m = /^delay (\d+)$/.exec(c);
        if (m && Number(m[1]) > 20) next = t + Math.ceil(Number(m[1]) / 20) * 20 + 80;
        planned.push([t, c]);
      }
      t = next;
    }
    const { log, error } = simulate(loadCase(dir), { profile: 'pve-9.2' });
    expect(error).toBeUndefined();
    for (const [time, c] of planned) expect(log).toMatch(new RegExp(`^info +${time} +cmdlist: execute ${c}$`, 'm'));
    // the run ends 600 s after the last list, at the requested duration (3600 → last slot 3020)
    expect(log).toMatch(/^info +3620 +hardware: exit simulation - done$/m);
  });
});

describe('generateCase', () => {
  const params = {
    name: 'mixed',
    seed: 7,
    duration: '2h',
    nodes: [
      { count: 3, cpu: 32, memGiB: 128 },
      { count: 2, cpu: 16, memGiB: 64 },
    ],
    guests: { count: 60, containers: 0.2, placement: 'random' },
    rules: { nodeAffinity: 2, together: 2, separate: 2 },
    load: { shape: 'diurnal', step: '30m' },
    maintenance: { count: 1, duration: '20m' },
    failures: { count: 1, duration: '10m' },
  };

  it('same parameters and seed → the same files, byte for byte; another seed → others', () => {
    const a = tmp('poise-gen-a-');
    const b = tmp('poise-gen-b-');
    writeCase(a, gen(params));
    writeCase(b, gen(params));
    const names = readdirSync(a).sort();
    expect(readdirSync(b).sort()).toEqual(names);
    for (const f of names) expect(readFileSync(join(b, f)).equals(readFileSync(join(a, f))), f).toBe(true);
    const c = gen({ ...params, seed: 8 });
    expect(c.get('dynamic_service_stats')).not.toBe(readFileSync(join(a, 'dynamic_service_stats'), 'utf8'));
  });

  it('a case without the new simulator features loads and runs today', () => {
    const dir = tmp('poise-gen-run-');
    writeCase(dir, gen(params));
    const input = loadCase(dir);
    expect(Object.keys(input.hardwareStatus)).toHaveLength(5);
    expect(Object.keys(input.serviceConfig)).toHaveLength(60);
    expect(input.rulesConfig).toContain('affinity negative');
    const { log, error } = simulate(input, { profile: 'pve-9.2' });
    expect(error).toBeUndefined();
    expect(log).toMatch(/exit simulation - done/);
    // the diurnal curve updates 20 % of the guests every 30 min
    expect(log).toMatch(/cmdlist: execute service (vm|ct):\d+ set-dynamic-stats cpu /);
    expect(log).toMatch(/execute crm node\d enable-node-maintenance/);
    expect(log).toMatch(/execute power node\d off/);
  });

  it('every guest fits on its node; sizes are heavy-tailed (mean above the median)', () => {
    const files = gen({
      ...params,
      guests: { count: 400, placement: 'spread' },
      nodes: [{ count: 8, cpu: 64, memGiB: 512 }],
    });
    const hw = JSON.parse(files.get('hardware_status')!) as Record<string, { maxmem: number }>;
    const sc = JSON.parse(files.get('service_config')!) as Record<string, { node: string }>;
    const st = JSON.parse(files.get('static_service_stats')!) as Record<string, { maxmem: number }>;
    const used = new Map<string, number>();
    for (const [sid, c] of Object.entries(sc)) used.set(c.node, (used.get(c.node) ?? 0) + st[sid]!.maxmem);
    for (const [n, u] of used) expect(u).toBeLessThanOrEqual(hw[n]!.maxmem);
    const mems = Object.values(st)
      .map((s) => s.maxmem)
      .sort((a, b) => a - b);
    const mean = mems.reduce((a, b) => a + b, 0) / mems.length;
    expect(mean).toBeGreaterThan(mems[mems.length / 2]!);
  });

  it('failing guests, pressure, base load and noise use issue 8 syntax', () => {
    const files = gen({
      guests: { count: 10 },
      failing: { cdrom: 2, fa: 1 },
      duration: '2h',
      pressure: { episodes: 2, duration: '15m', cpu: 30, mem: 5 },
      baseLoad: { cpu: 0.05, mem: 0.1 },
      noise: { cpu: 0.5, memMiB: 256 },
    });
    expect(Object.keys(JSON.parse(files.get('guest_config')!))).toHaveLength(2);
    expect(JSON.parse(files.get('guest_config')!)).toMatchObject({});
    expect(files.get('guest_config')).toContain('"ide2": "local:iso/install.iso,media=cdrom"');
    expect(files.get('service_config')).toMatch(/"fa:1090100001"/);
    const cmd = files.get('cmdlist')!;
    expect(cmd).toMatch(/"node node1 set-dynamic-stats cpu 0\.8 mem 6554"/); // 16 · 0.05; 65536 · 0.1
    expect(cmd).toMatch(/"node node1 set-noise cpu 0\.5 mem 256"/);
    expect(cmd).toMatch(/"node node\d set-dynamic-stats pressurecpusome 30 pressurememorysome 5"/);
    expect(cmd).toMatch(/"node node\d set-dynamic-stats pressurecpusome 0 pressurememorysome 0"/);
    expect(JSON.parse(files.get('sim_options')!)).toEqual({ seed: 1, 'max-time': 7220 + 1200 });
  });

  it('pressure baseline: every node reports it from the start; overlapping episodes on a node merge', () => {
    const params = {
      nodes: [{ count: 1, cpu: 16, memGiB: 64 }],
      guests: { count: 2 },
      duration: '4h',
      pressure: { baseline: { cpu: 1.5, mem: 0.5 }, episodes: 6, duration: '1h', cpu: 20, mem: 8 },
    };
    const lists = JSON.parse(gen(params).get('cmdlist')!) as string[][];
    const set = (cpu: number, mem: number) =>
      `node node1 set-dynamic-stats pressurecpusome ${cpu} pressurememorysome ${mem}`;
    expect(lists[0]).toContain(set(1.5, 0.5));
    // one node, six 1 h episodes in [720 s, 4 h − 20 min − 1 h]: they overlap, so starts and
    // ends alternate (never two starts in a row: a merged episode ends once)
    const seq = lists
      .flat()
      .filter((c) => c === set(20, 8) || c === set(1.5, 0.5))
      .slice(1);
    expect(seq.length).toBeGreaterThanOrEqual(2);
    seq.forEach((c, i) => expect(c).toBe(i % 2 === 0 ? set(20, 8) : set(1.5, 0.5)));
    expect(seq.length).toBeLessThan(12);
    // without a baseline, episodes end at 0 and nothing is reported before the first
    const none = gen({ ...params, pressure: { episodes: 1 } }).get('cmdlist')!;
    expect(none).not.toContain('pressurecpusome 1.5');
    expect(none).toContain('pressurecpusome 0 pressurememorysome 0');
  });

  it('hot-node hotPressure: the hot node reports it from `at` on, after the baseline of its slot', () => {
    const lists = (at: string) =>
      JSON.parse(
        gen({
          duration: '2h',
          guests: { count: 6 },
          load: { shape: 'hot-node', hotNode: 'node2', at, hotPressure: 18 },
          pressure: { baseline: { cpu: 2, mem: 0.5 } },
        }).get('cmdlist')!,
      ) as string[][];
    const hot = 'node node2 set-dynamic-stats pressurecpusome 18 pressurememorysome 0.5';
    const base = 'node node2 set-dynamic-stats pressurecpusome 2 pressurememorysome 0.5';
    // at 0: the same slot as the baseline, and after it (the later command wins)
    const first = lists('0')[0]!;
    expect(first.indexOf(hot)).toBeGreaterThan(first.indexOf(base));
    expect(first.indexOf(base)).toBeGreaterThanOrEqual(0);
    // at 1 h: the slot at or after 3600 s (3620): the first list waits 3620 − 20 − 80 s for it
    const later = lists('1h');
    expect(later[0]).toContain('delay 3520');
    expect(later[1]).toContain(hot);
  });

  it('a burst never takes a guest past its cores (maxcpu)', () => {
    const files = gen({
      duration: '4h',
      guests: { count: 20, cpu: { median: 2, sigma: 1, min: 0.1, max: 8 } },
      load: { shape: 'bursty', burstsPerHour: 30, factor: 20 },
    });
    const st = JSON.parse(files.get('static_service_stats')!) as Record<string, { maxcpu: number }>;
    const sets = JSON.parse(files.get('cmdlist')!)
      .flat()
      .map((c: string) => /^service (\S+) set-dynamic-stats cpu (\S+)$/.exec(c))
      .filter(Boolean) as RegExpExecArray[];
    expect(sets.length).toBeGreaterThan(50);
    for (const m of sets) expect(Number(m[2])).toBeLessThanOrEqual(st[m[1]!]!.maxcpu);
    // and some bursts reach it: × 20 is more than any guest has
    expect(sets.some((m) => Number(m[2]) === st[m[1]!]!.maxcpu)).toBe(true);
  });

  it("failing.pick 'largest' gives the largest guests the failing kinds", () => {
    const base = { guests: { count: 30 }, nodes: [{ count: 3, cpu: 32, memGiB: 128 }] };
    const files = gen({ ...base, failing: { cdrom: 2, fa: 1, pick: 'largest' } });
    const st = JSON.parse(files.get('static_service_stats')!) as Record<string, { maxmem: number }>;
    const bySize = Object.entries(st).sort((a, b) => b[1].maxmem - a[1].maxmem);
    const failing = new Set([
      ...Object.keys(JSON.parse(files.get('guest_config')!)),
      ...Object.keys(st).filter((s) => s.startsWith('fa:')),
    ]);
    expect(failing.size).toBe(3);
    // every failing guest is at least as large as every other guest
    const smallestFailing = Math.min(...[...failing].map((sid) => st[sid]!.maxmem));
    for (const [sid, v] of bySize) if (!failing.has(sid)) expect(v.maxmem).toBeLessThanOrEqual(smallestFailing);
  });

  it('guests.memhost: the host footprint, between the memory in use × min and × max, at most the configured memory; other draws unchanged', () => {
    const base = { guests: { count: 40 }, nodes: [{ count: 3, cpu: 32, memGiB: 128 }] };
    const without = JSON.parse(gen(base).get('dynamic_service_stats')!) as Record<
      string,
      { cpu: number; mem: number; memhost?: number }
    >;
    const withHost = JSON.parse(
      gen({ ...base, guests: { ...base.guests, memhost: { min: 1.1, max: 1.5 } } }).get('dynamic_service_stats')!,
    ) as typeof without;
    const st = JSON.parse(gen(base).get('static_service_stats')!) as Record<string, { maxmem: number }>;
    const MiB = 1024 ** 2;
    for (const [sid, d] of Object.entries(withHost)) {
      expect({ cpu: d.cpu, mem: d.mem }).toEqual(without[sid]);
      expect(without[sid]!.memhost).toBeUndefined();
      expect(d.memhost!).toBeGreaterThanOrEqual(Math.min(st[sid]!.maxmem, Math.round((d.mem / MiB) * 1.1) * MiB));
      expect(d.memhost!).toBeLessThanOrEqual(Math.min(st[sid]!.maxmem, Math.round((d.mem / MiB) * 1.5) * MiB));
    }
  });

  for (const shape of ['idle', 'diurnal', 'bursty', 'hot-node', 'overcommit', 'noisy-neighbour']) {
    it(`no guests at all is a valid ${shape} scenario`, () => {
      // (a noisy neighbour outside HA needs no guests: here the guest kind)
      const files = gen({
        guests: { count: 0 },
        load: { shape, ...(shape === 'noisy-neighbour' ? { neighbour: 'guest' } : {}) },
      });
      expect(files.get('service_config')).toBe('{}\n');
      expect(JSON.parse(files.get('cmdlist')!)[0]).toEqual([
        'power node1 on',
        'power node2 on',
        'power node3 on',
        'delay 6520',
      ]);
    });
  }

  it('reaches 64 nodes × 5,000 guests × 24 h with files of reasonable size', () => {
    const files = gen({
      duration: '24h',
      nodes: [
        { count: 48, cpu: 64, memGiB: 512 },
        { count: 16, cpu: 128, memGiB: 1024 },
      ],
      guests: { count: 5000, containers: 0.2 },
      rules: { nodeAffinity: 20, together: 10, separate: 10 },
      load: { shape: 'diurnal', step: '1h', share: 0.2 },
      pressure: { episodes: 6 },
      failing: { cdrom: 10, fa: 5 },
      maintenance: { count: 2 },
      failures: { count: 1 },
    });
    const total = [...files.values()].reduce((a, t) => a + Buffer.byteLength(t), 0);
    // 24 updates × 1,000 guests ≈ 24,000 commands; every file together under 8 MB
    expect(total).toBeLessThan(8 * 1024 * 1024);
    expect(JSON.parse(files.get('cmdlist')!).flat().length).toBeGreaterThan(20_000);
    expect(Object.keys(JSON.parse(files.get('hardware_status')!))).toHaveLength(64);
  });
});

describe('load shapes that cause contention, and the load pressure model', () => {
  it('guests.headroom: a guest’s cores are the power of two at or above its cpu × headroom', () => {
    // bursty without bursts: every guest keeps the cpu it was drawn with
    const params = (headroom?: number) => ({
      guests: { count: 20, ...(headroom ? { headroom } : {}) },
      load: { shape: 'bursty', burstsPerHour: 0 },
    });
    const st = (headroom?: number) =>
      JSON.parse(gen(params(headroom)).get('static_service_stats')!) as Record<string, { maxcpu: number }>;
    const dy = JSON.parse(gen(params()).get('dynamic_service_stats')!) as Record<string, { cpu: number }>;
    const two = st();
    const eight = st(8);
    for (const [sid, { cpu }] of Object.entries(dy)) {
      // cpu 0.3: 2 → 0.6 → 1 core; 8 → 2.4 → 4 cores (at most the node's 16)
      expect(two[sid]!.maxcpu).toBe(Math.min(16, Math.max(1, 2 ** Math.ceil(Math.log2(cpu * 2)))));
      expect(eight[sid]!.maxcpu).toBe(Math.min(16, Math.max(1, 2 ** Math.ceil(Math.log2(cpu * 8)))));
    }
    // the default is 2: the same files as before the parameter existed
    expect(st(2)).toEqual(two);
  });

  it('overcommitFactor: one factor for every guest, each capped at its cores', () => {
    // 1 + 2 + 1 = 4 cores at f = 1; target 6: f = 1.5 (1.5 + 3 + 1.5), no cap reached
    expect(
      overcommitFactor(
        [
          { cpu: 1, maxcpu: 4 },
          { cpu: 2, maxcpu: 4 },
          { cpu: 1, maxcpu: 2 },
        ],
        6,
      ),
    ).toBeCloseTo(1.5, 12);
    // target 9: at f = 2 the second and third reach their cores (2 + 4 + 2 = 8), then only the
    // first grows: f + 6 = 9 → f = 3
    expect(
      overcommitFactor(
        [
          { cpu: 1, maxcpu: 4 },
          { cpu: 2, maxcpu: 4 },
          { cpu: 1, maxcpu: 2 },
        ],
        9,
      ),
    ).toBeCloseTo(3, 12);
    // more than every guest at its cores (10): all at their cores
    expect(
      overcommitFactor(
        [
          { cpu: 1, maxcpu: 4 },
          { cpu: 2, maxcpu: 4 },
          { cpu: 1, maxcpu: 2 },
        ],
        12,
      ),
    ).toBe(Infinity);
  });

  it('overcommit: from `at`, the guests demand the level of all cores', () => {
    const files = gen({
      duration: '2h',
      nodes: [{ count: 3, cpu: 8, memGiB: 64 }],
      guests: { count: 12, placement: 'packed' },
      load: { shape: 'overcommit', level: 0.5, at: '30m' },
    });
    const st = JSON.parse(files.get('static_service_stats')!) as Record<string, { maxcpu: number }>;
    const cmds = (JSON.parse(files.get('cmdlist')!) as string[][])
      .flat()
      .filter((c) => c.includes('set-dynamic-stats cpu'));
    expect(cmds).toHaveLength(12);
    const total = cmds.reduce((a, c) => a + Number(/cpu ([\d.]+)$/.exec(c)![1]), 0);
    // 0.5 × 24 cores = 12, up to the rounding of each guest to 0.01 (or every guest at its cores)
    const cap = Object.values(st).reduce((a, x) => a + x.maxcpu, 0);
    expect(total).toBeCloseTo(Math.min(12, cap), 0);
  });

  it('noisy-neighbour host: a process on the node bursts every period and returns to the base load', () => {
    const files = gen({
      duration: '6h',
      nodes: [{ count: 3, cpu: 16, memGiB: 64 }],
      baseLoad: { cpu: 0.05 },
      load: { shape: 'noisy-neighbour', hotNode: 'node2', at: '1h', burst: '30m', period: '2h' },
    });
    const cmds = (JSON.parse(files.get('cmdlist')!) as string[][])
      .flat()
      .filter((c) => c.startsWith('node node2 set-dynamic-stats cpu'));
    // the base load (0.8 of 16 cores, with its memory), then bursts of 0.8 + 8 at 1 h, 3 h and
    // 5 h (ending at 5.5 h, before the last command at 6 h − 600 s)
    expect(cmds).toEqual([
      'node node2 set-dynamic-stats cpu 0.8 mem 0',
      'node node2 set-dynamic-stats cpu 8.8',
      'node node2 set-dynamic-stats cpu 0.8',
      'node node2 set-dynamic-stats cpu 8.8',
      'node node2 set-dynamic-stats cpu 0.8',
      'node node2 set-dynamic-stats cpu 8.8',
      'node node2 set-dynamic-stats cpu 0.8',
    ]);
  });

  it('noisy-neighbour guest: the guest with the most cores runs at all of them during bursts', () => {
    const files = gen({
      duration: '4h',
      guests: { count: 10 },
      load: { shape: 'noisy-neighbour', neighbour: 'guest', at: '1h', burst: '20m', period: '1h' },
    });
    const st = JSON.parse(files.get('static_service_stats')!) as Record<string, { maxcpu: number }>;
    const most = Math.max(...Object.values(st).map((x) => x.maxcpu));
    const cmds = (JSON.parse(files.get('cmdlist')!) as string[][]).flat().filter((c) => c.startsWith('service '));
    const sids = new Set(cmds.map((c) => c.split(' ')[1]));
    expect(sids.size).toBe(1);
    const sid = [...sids][0]!;
    expect(st[sid]!.maxcpu).toBe(most);
    expect(cmds.filter((c) => c.endsWith(`cpu ${most}`))).toHaveLength(3);
  });

  it('loadPressure: sim_options opts into the load model with the settings as given; the case loads', () => {
    const loadPressure = {
      cpu: { family: 'logistic', knee: 0.75, width: 0.06, 'noise-percent': 1 },
      heterogeneity: 0.2,
      nodes: { node3: { psi: false } },
    };
    const files = gen({ duration: '2h', loadPressure, load: { shape: 'hot-node', factor: 4, at: '30m' } });
    expect(JSON.parse(files.get('sim_options')!)).toEqual({
      seed: 1,
      'max-time': expect.any(Number),
      'pressure-model': 'load',
      'load-pressure': loadPressure,
    });
    expect(files.get('README')).toMatch(/pressure-model' 'load'/);
    const dir = tmp('poise-gen-load-');
    writeCase(dir, files);
    const input = loadCase(dir);
    expect(input.simOptions?.pressureModel).toBe('load');
    expect(input.simOptions?.loadPressure?.nodes.node3?.psi).toBe(false);
    const { error } = simulate(input, { profile: 'pve-9.2' });
    expect(error).toBeUndefined();
    // without it, the model is off and nothing changes
    expect(JSON.parse(gen({ duration: '2h' }).get('sim_options')!)).toEqual({
      seed: 1,
      'max-time': expect.any(Number),
    });
  });
});

describe('bad parameters are errors before anything is written', () => {
  const cases: { name: string; params: object; error: RegExp }[] = [
    {
      name: 'more guests than fit (before drawing)',
      params: { nodes: [{ count: 2, cpu: 8, memGiB: 16 }], guests: { count: 100 } },
      error: /^'p\.yaml' guests\.count: 100 guests of at least 0\.5 GiB need 50 GiB; the nodes have 32 GiB$/,
    },
    {
      name: 'more guests than fit (once drawn)',
      params: { nodes: [{ count: 2, cpu: 8, memGiB: 16 }], guests: { count: 40, memGiB: { median: 4, min: 0.5 } } },
      error: /^'p\.yaml' guests: the 40 guests drawn need [\d.]+ GiB of memory; the nodes have 32\.0 GiB/,
    },
    {
      name: 'a negative count',
      params: { guests: { count: -1 } },
      error: /^'p\.yaml' guests\.count: expected a count ≥ 0$/,
    },
    {
      name: 'an unknown load shape',
      params: { load: { shape: 'spiky' } },
      error:
        /^'p\.yaml' load\.shape: expected one of idle, diurnal, bursty, hot-node, overcommit, noisy-neighbour, trace$/,
    },
    {
      name: 'a bad load pressure parameter',
      params: { loadPressure: { cpu: { family: 'logistic', knee: 0 } } },
      error: /^'p\.yaml' loadPressure\.cpu\.knee: expected a number > 0 and ≤ 4, got 0$/,
    },
    {
      name: 'load pressure settings for an unknown node',
      params: { loadPressure: { nodes: { node4: { psi: 0 } } } },
      error: /^'p\.yaml' loadPressure\.nodes\.node4: node 'node4' does not exist in hardware_status$/,
    },
    {
      name: 'load pressure that is not an object',
      params: { loadPressure: 'queue' },
      error: /^'p\.yaml' loadPressure: /,
    },
    {
      name: 'scripted pressure with the load model',
      params: { loadPressure: {}, pressure: { baseline: { cpu: 2 } } },
      error: /^'p\.yaml' pressure: scripted pressure, but loadPressure computes/,
    },
    {
      name: 'a hot node’s scripted pressure with the load model',
      params: { loadPressure: {}, load: { shape: 'hot-node', hotPressure: 18 } },
      error: /^'p\.yaml' load\.hotPressure: scripted pressure/,
    },
    {
      name: 'a headroom below 1',
      params: { guests: { headroom: 0.5 } },
      error: /^'p\.yaml' guests\.headroom: expected a factor from 1 to 64$/,
    },
    {
      name: 'an overcommit level of 0',
      params: { load: { shape: 'overcommit', level: 0 } },
      error: /^'p\.yaml' load\.level: expected a share of the cores from 0\.01 to 4$/,
    },
    {
      name: 'a burst longer than its period',
      params: { load: { shape: 'noisy-neighbour', burst: '2h', period: '1h' } },
      error: /^'p\.yaml' load\.burst: a burst of 7200 s does not fit in a period of 3600 s$/,
    },
    {
      name: 'an unknown noisy node',
      params: { load: { shape: 'noisy-neighbour', hotNode: 'node7' } },
      error: /^'p\.yaml' load\.hotNode: unknown node 'node7' \(node1\.\.node3\)$/,
    },
    {
      name: 'an unknown neighbour',
      params: { load: { shape: 'noisy-neighbour', neighbour: 'tenant' } },
      error: /^'p\.yaml' load\.neighbour: /,
    },
    { name: 'an unknown field', params: { gusets: { count: 3 } }, error: /^'p\.yaml' \(top level\): unrecognized key/ },
    {
      name: 'a bad duration',
      params: { duration: '3 weeks' },
      error: /^'p\.yaml' duration: expected a duration in whole seconds/,
    },
    {
      name: 'a too short duration',
      params: { duration: 60 },
      error: /^'p\.yaml' duration: expected a duration between 1200 s/,
    },
    {
      name: 'an unknown hot node',
      params: { load: { shape: 'hot-node', hotNode: 'node9' } },
      error: /^'p\.yaml' load\.hotNode: unknown node 'node9' \(node1\.\.node3\)$/,
    },
    {
      name: 'more failing guests than guests',
      params: { guests: { count: 2 }, failing: { fa: 3 } },
      error: /^'p\.yaml' failing: 3 failing guests, but only 2 guests$/,
    },
    {
      name: 'too many rules',
      params: { guests: { count: 4 }, rules: { together: 3 } },
      error: /^'p\.yaml' rules: the rules need 6 distinct guests/,
    },
    {
      name: 'every node failing',
      params: { failures: { count: 3 } },
      error: /^'p\.yaml' failures\.count: 3 of 3 nodes: at least one node must stay up$/,
    },
    {
      name: 'an unknown crs key',
      params: { crs: { 'ha-rebalance-speed': 2 } },
      error: /^'p\.yaml' crs: unknown crs key 'ha-rebalance-speed'/,
    },
    {
      name: 'min above median',
      params: { guests: { memGiB: { median: 1, min: 2 } } },
      error: /^'p\.yaml' guests\.memGiB: expected 'min' ≤ 'median' ≤ 'max'$/,
    },
    { name: 'no nodes', params: { nodes: [] }, error: /^'p\.yaml' nodes: expected at least one node group$/ },
    {
      name: 'a memhost factor below 1',
      params: { guests: { memhost: { min: 0.8, max: 1.2 } } },
      error: /^'p\.yaml' guests\.memhost\.min: expected a factor ≥ 1$/,
    },
    {
      name: 'an unknown failing pick',
      params: { failing: { fa: 1, pick: 'smallest' } },
      error: /^'p\.yaml' failing\.pick: /,
    },
    {
      name: 'a pressure baseline above 100 %',
      params: { pressure: { baseline: { cpu: 120 } } },
      error: /^'p\.yaml' pressure\.baseline\.cpu: expected a percentage in 0\.\.100$/,
    },
    {
      name: 'a crs value the simulator refuses',
      params: { crs: { 'ha-auto-rebalance-backoff': -1 } },
      error: /^'p\.yaml' crs\.ha-auto-rebalance-backoff: invalid value '-1'/,
    },
    {
      name: 'a fraction above 1',
      params: { guests: { containers: 1.5 } },
      error: /^'p\.yaml' guests\.containers: expected a fraction in 0\.\.1$/,
    },
  ];
  for (const c of cases) it(c.name, () => expect(() => gen(c.params)).toThrow(c.error));
  it('a non-empty output directory is refused', () => {
    const dir = tmp('poise-gen-full-');
    writeCase(dir, gen({}));
    expect(() => writeCase(dir, gen({}))).toThrow(/exists and is not empty/);
    expect(existsSync(join(dir, 'cmdlist'))).toBe(true);
  });
  it('durations', () => {
    expect([90, '90', '90s', '30m', '24h', '2d', '1.5h'].map(parseDuration)).toEqual([
      90, 90, 90, 1800, 86400, 172800, 5400,
    ]);
    expect(['', '1w', '-5', '0.5s'].map(parseDuration)).toEqual([undefined, undefined, undefined, undefined]);
  });
});

describe('committed parameter files', () => {
  const root = new URL('../../../lab/', import.meta.url);
  for (const sub of ['corpus', 'corpus/contention', 'corpus/large', 'examples']) {
    const dir = new URL(`${sub}/`, root);
    for (const f of readdirSync(dir)
      .filter((x) => x.endsWith('.yaml'))
      .sort()) {
      it(`${sub}/${f} is valid and generates`, async () => {
        const { readParams } = await import('./params');
        const files = generateCase(validateParams(readParams(new URL(f, dir).pathname), f), f);
        expect(files.get('cmdlist')).toMatch(/power node1 on/);
      });
    }
  }
});
