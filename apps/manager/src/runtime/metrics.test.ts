/**
 * The daemon's counters count from zero: every labelled counter has its series at 0 for each
 * value it is known to take before the first round (so Prometheus's `increase()` sees the first
 * event), the motion counters rise by exactly the motions of a run, and the dashboard's
 * "Motions (24 h)" reads the run's exact count over the scrapes of a daemon on the fake cluster,
 * across a restart and with the 24 h window cutting through the scrapes.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { referencePipeline } from '@poise/policy';
import { describe, expect, it } from 'vitest';
import { MOTION_VIAS, PORT_ERROR_KINDS } from '../cluster/port';
import { PVE_ADAPTER_ENDPOINTS } from '../cluster/pve-adapter';
import { parseConfig } from '../config/load';
import { Logger } from '../log';
import { FakeCluster, type FakeClusterSpec, fakeHost } from '../testing/fake-cluster';
import { evaluatePromql, parseExposition, SeriesStore } from '../testing/promql';
import { GIB } from '../testing/support';
import { Daemon } from './daemon';
import { ROUND_OUTCOMES } from './journal';
import { localLockFs } from './lock';
import { DRAIN_VIA, Metrics, MOTION_VIA_LABELS } from './metrics';
import { DAEMON_REASONS, knownSkipReasons, REFERENCE_STOP_CODES } from './reasons';

const dashboard = JSON.parse(
  readFileSync(new URL('../../../../tools/grafana/poise-manager.json', import.meta.url), 'utf8'),
) as { panels: { title: string; targets?: { expr: string; legendFormat?: string }[] }[] };

/** The "Motions (24 h)" queries by legend (`succeeded`, `failed`), for every instance (`$instance` = `.*`, its all-value). */
function motionsPanel(): Record<string, string> {
  const panel = dashboard.panels.find((p) => p.title === 'Motions (24 h)');
  expect(panel).toBeDefined();
  return Object.fromEntries(
    (panel!.targets ?? []).map((t) => [t.legendFormat ?? '?', t.expr.replaceAll('$instance', '.*')]),
  );
}

/** Three nodes of 16 cores / 64 GiB; six HA VMs of 2 cores / 8 GiB on node1: imbalance 100 %, so the daemon moves some. */
function unbalanced(extra: Partial<FakeClusterSpec> = {}): FakeClusterSpec {
  return {
    nodes: [{ name: 'node1' }, { name: 'node2' }, { name: 'node3' }],
    guests: ['vm:101', 'vm:102', 'vm:103', 'vm:104', 'vm:105', 'vm:106'].map((sid) => ({
      sid,
      node: 'node1',
      cpu: 2,
      mem: 8 * GIB,
    })),
    ...extra,
  };
}

/** A daemon in act mode on `cluster` with its listener on a free loopback port (the reference pipeline). */
async function startDaemon(cluster: FakeCluster, dir: string, lines: string[]) {
  const config = parseConfig(
    {
      env: 'pve',
      mode: 'act',
      pve: { urls: ['https://node1:8006'], 'token-env': 'POISE_TEST_TOKEN' },
      state: { file: join(dir, 'state.json') },
      metrics: { enabled: true, listen: '127.0.0.1:0' },
      lock: { enabled: false },
      policy: { 'ha-auto-rebalance-preset': 'reference' },
    },
    join(dir, 'poise-manager.yaml'),
  );
  let port = 0;
  const host = fakeHost(cluster);
  const daemon = new Daemon({
    config,
    host,
    log: new Logger(
      { format: 'json', level: 'info' },
      (l) => lines.push(l),
      () => cluster.time,
    ),
    version: 'test',
    lockFs: localLockFs,
    onListening: (a) => (port = a.port),
  });
  await daemon.start();
  expect(port).toBeGreaterThan(0);
  const never = new AbortController().signal;
  return {
    daemon,
    scrape: async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text(),
    round: async () => {
      await daemon.runRound();
      await host.clock.sleep(config.intervalSeconds, never);
    },
  };
}

/** The samples of the counters (`# TYPE … counter`), by family. */
function counterSamples(text: string): Map<string, { labels: Record<string, string>; value: number }[]> {
  const families = [...text.matchAll(/^# TYPE (\S+) counter$/gm)].map((m) => m[1]!);
  const samples = parseExposition(text);
  return new Map(
    families.map((family) => [
      family,
      samples.filter((s) => s.name === family).map((s) => ({ labels: { ...s.labels }, value: s.value })),
    ]),
  );
}

/** A counter's value for one label set (`undefined`: no series). */
function valueOf(text: string, name: string, labels: Record<string, string>): number | undefined {
  return parseExposition(text).find(
    (s) =>
      s.name === name &&
      Object.keys(s.labels).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  )?.value;
}

/** Motions that ended, by result, as the daemon's log lines say (independent of the metrics). */
function endedMotions(lines: readonly string[]): { succeeded: number; failed: number } {
  const results = lines
    .map((l) => JSON.parse(l) as { event?: string; result?: string })
    .filter((r) => r.event === 'motion')
    .map((r) => r.result);
  return {
    succeeded: results.filter((r) => r === 'succeeded').length,
    failed: results.filter((r) => r === 'failed').length,
  };
}

const FAKE_ENDPOINTS = FakeCluster.create(unbalanced()).errorEndpoints;

describe('the labelled counters', () => {
  it('have every known label value at 0 before the first round, and nothing else', async () => {
    const cluster = FakeCluster.create(unbalanced());
    const d = await startDaemon(cluster, mkdtempSync(join(tmpdir(), 'poise-metrics-')), []);
    const text = await d.scrape();
    await d.daemon.close();
    const counters = counterSamples(text);
    const expected: Record<string, Record<string, string>[]> = {
      poise_rounds_total: [{}],
      poise_round_decisions_total: ROUND_OUTCOMES.map((outcome) => ({ outcome })),
      poise_round_skips_total: knownSkipReasons(referenceStages()).map((reason) => ({ reason })),
      poise_motions_issued_total: MOTION_VIA_LABELS.map((via) => ({ via })),
      poise_motions_succeeded_total: MOTION_VIA_LABELS.map((via) => ({ via })),
      poise_motions_failed_total: MOTION_VIA_LABELS.map((via) => ({ via })),
      poise_api_errors_total: FAKE_ENDPOINTS.flatMap((endpoint) =>
        PORT_ERROR_KINDS.map((kind) => ({ endpoint, kind })),
      ),
    };
    const key = (l: Record<string, string>) => JSON.stringify(Object.entries(l).sort());
    expect([...counters.keys()].sort()).toEqual(Object.keys(expected).sort());
    for (const [family, samples] of counters) {
      expect(samples.map((s) => key(s.labels)).sort(), family).toEqual(expected[family]!.map(key).sort());
      for (const s of samples) expect(s.value, `${family} ${key(s.labels)}`).toBe(0);
    }
    // the sets as they are derived: 3 vias (ha, guest, drain), 6 outcomes, 3 endpoints × 7 kinds
    expect(MOTION_VIA_LABELS).toEqual([...MOTION_VIAS, DRAIN_VIA]);
    expect(counters.get('poise_motions_issued_total')).toHaveLength(3);
    expect(counters.get('poise_round_decisions_total')).toHaveLength(6);
    expect(counters.get('poise_api_errors_total')).toHaveLength(21);
    expect(counters.get('poise_round_skips_total')!.map((s) => s.labels.reason)).toEqual(
      expect.arrayContaining([
        'holding',
        'below-threshold',
        'below-margin',
        'motion-in-flight',
        'standby',
        'api-error',
      ]),
    );
  });

  it('rise by exactly the run: motions issued, succeeded and failed as the cluster and the log saw them', async () => {
    // vm:101's first motion fails (back on node1), every other one succeeds
    const cluster = FakeCluster.create(unbalanced({ scripts: { 'vm:101': [{ outcome: 'fail' }, {}] } }));
    const lines: string[] = [];
    const d = await startDaemon(cluster, mkdtempSync(join(tmpdir(), 'poise-metrics-')), lines);
    const before = await d.scrape();
    for (let i = 0; i < 40; i++) await d.round();
    const after = await d.scrape();
    await d.daemon.close();
    const ended = endedMotions(lines);
    expect(ended.failed).toBe(1);
    expect(ended.succeeded).toBeGreaterThanOrEqual(2);
    const rise = (name: string) => valueOf(after, name, { via: 'ha' })! - valueOf(before, name, { via: 'ha' })!;
    expect(rise('poise_motions_issued_total')).toBe(cluster.s.requests.length);
    expect(rise('poise_motions_succeeded_total')).toBe(ended.succeeded);
    expect(rise('poise_motions_failed_total')).toBe(ended.failed);
    // the other vias stay at 0 (series kept, never dropped)
    for (const via of ['guest', DRAIN_VIA]) expect(valueOf(after, 'poise_motions_issued_total', { via })).toBe(0);
    expect(valueOf(after, 'poise_rounds_total', {})).toBe(40);
  });

  it('name memory `memory` in both node metrics', async () => {
    const spec = unbalanced();
    spec.nodes[0] = { name: 'node1', pressureCpu: 3, pressureMem: 1.5 };
    const d = await startDaemon(FakeCluster.create(spec), mkdtempSync(join(tmpdir(), 'poise-metrics-')), []);
    await d.round();
    const text = await d.scrape();
    await d.daemon.close();
    // six VMs of 8 GiB on 64 GiB: 0.75
    expect(valueOf(text, 'poise_node_load_ratio', { node: 'node1', resource: 'memory' })).toBe(0.75);
    expect(valueOf(text, 'poise_node_pressure_some_avg10_percent', { node: 'node1', resource: 'memory' })).toBe(1.5);
    expect(text).not.toMatch(/resource="mem"/);
  });

  it('keep their counts when a reload adds label values', async () => {
    const metrics = new Metrics({ skipReasons: ['holding'], errorEndpoints: ['GET /x'] });
    metrics.skips.inc({ reason: 'holding' });
    metrics.apiErrors.inc({ endpoint: 'GET /x', kind: 'timeout' }, 2);
    metrics.countFromZero({ skipReasons: ['holding', 'cooldown'], errorEndpoints: ['GET /x'] });
    const text = await metrics.registry.metrics();
    expect(valueOf(text, 'poise_round_skips_total', { reason: 'holding' })).toBe(1);
    expect(valueOf(text, 'poise_round_skips_total', { reason: 'cooldown' })).toBe(0);
    expect(valueOf(text, 'poise_api_errors_total', { endpoint: 'GET /x', kind: 'timeout' })).toBe(2);
    expect(counterSamples(text).get('poise_api_errors_total')).toHaveLength(PORT_ERROR_KINDS.length);
  });
});

/** The stages of the reference pipeline (the daemon's `reference` preset). */
function referenceStages() {
  return referencePipeline({ threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'bruteforce' }).stages;
}

describe('the label sets come from their owners', () => {
  it("the daemon's reasons: every round line of src/runtime gives one of DAEMON_REASONS, with its outcome", () => {
    const dir = new URL('.', import.meta.url);
    const found = new Map<string, string>();
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))) {
      const text = readFileSync(new URL(file, dir), 'utf8');
      // `outcome: '<o>'`, then (fields, a level in between) the line's `reason: '<r>'`
      for (const m of text.matchAll(/outcome: '([a-z-]+)',?[^}]*?reason: '([a-z-]+)'/g)) found.set(m[2]!, m[1]!);
    }
    expect(Object.fromEntries(found)).toEqual(DAEMON_REASONS);
  });

  it("the reference stages' codes: each code @poise/policy's stages stop with is in REFERENCE_STOP_CODES", () => {
    const stages = readFileSync(new URL('../../../../packages/policy/src/stages.ts', import.meta.url), 'utf8');
    const codes = new Set([...stages.matchAll(/code: '([a-z-]+)'/g)].map((m) => m[1]!));
    const known = new Set([...Object.values(REFERENCE_STOP_CODES).flat(), 'nothing-scored']);
    expect([...codes].filter((c) => !known.has(c))).toEqual([]);
    expect(referenceStages().every((s) => s.name.startsWith('score-') || s.name in REFERENCE_STOP_CODES)).toBe(true);
    // knownSkipReasons of the reference pipeline: the daemon's skip/standby/error reasons, invalid-input and these
    expect(knownSkipReasons(referenceStages())).toEqual(
      expect.arrayContaining([...known, 'invalid-input', 'not-settled', 'lock-error', 'error']),
    );
    // a stage named like an Object.prototype member is not a reference stage
    expect(knownSkipReasons([{ name: 'constructor' }])).not.toContain('constructor');
  });

  it("the PVE adapter's endpoints: every template its calls name", () => {
    const source = readFileSync(new URL('../cluster/pve-adapter.ts', import.meta.url), 'utf8');
    const named = new Set(
      [...source.matchAll(/(?:call|toPortError)\((?:err, )?'((?:GET|POST) [^']+)'/g)].map((m) => m[1]!),
    );
    expect(named.size).toBeGreaterThan(10);
    expect([...named].filter((e) => !(PVE_ADAPTER_ENDPOINTS as readonly string[]).includes(e))).toEqual([]);
  });
});

describe('the dashboard\'s "Motions (24 h)"', () => {
  it('reads the exact count of a run scraped every round, and across a restart of the daemon', async () => {
    const panel = motionsPanel();
    const store = new SeriesStore();
    const cluster = FakeCluster.create(unbalanced({ scripts: { 'vm:101': [{ outcome: 'fail' }, {}] } }));
    const dir = mkdtempSync(join(tmpdir(), 'poise-metrics-'));
    const target = { instance: 'node1:9879' };
    const lines: string[] = [];
    const first = await startDaemon(cluster, dir, lines);
    store.scrape(cluster.time, await first.scrape(), target);
    // the first run stops after its first success: the second has motions left to make
    for (let i = 0; i < 30 && endedMotions(lines).succeeded < 1; i++) {
      await first.round();
      store.scrape(cluster.time, await first.scrape(), target);
    }
    await first.daemon.close();
    const firstRun = endedMotions(lines);
    expect(firstRun.succeeded).toBe(1);
    // at its end: the run's motions, whole numbers (increase() would extrapolate past the last scrape)
    const at = (t: number, legend: string) => evaluatePromql(panel[legend]!, t, store)[0]?.value;
    const end = cluster.time;
    expect(at(end + 60, 'succeeded')).toBe(firstRun.succeeded);
    expect(at(end + 60, 'failed')).toBe(firstRun.failed);
    // a restart two minutes later, same instance: its counters start at 0 again, the panel goes on counting
    cluster.step(120);
    const second = await startDaemon(cluster, dir, lines);
    store.scrape(cluster.time, await second.scrape(), target);
    for (let i = 0; i < 30; i++) {
      await second.round();
      store.scrape(cluster.time, await second.scrape(), target);
    }
    await second.daemon.close();
    const both = endedMotions(lines);
    expect(both.succeeded).toBeGreaterThan(firstRun.succeeded);
    expect(at(cluster.time + 60, 'succeeded')).toBe(both.succeeded);
    expect(at(cluster.time + 60, 'failed')).toBe(both.failed);
  }, 60_000);

  it('counts the motions after the last scrape before the window when the 24 h cut through the scrapes', async () => {
    const panel = motionsPanel();
    const store = new SeriesStore();
    const cluster = FakeCluster.create(unbalanced());
    const d = await startDaemon(cluster, mkdtempSync(join(tmpdir(), 'poise-metrics-')), []);
    // one scrape before each round, stored half an hour apart: 60 scrapes span 29.5 h
    const HALF_HOUR = 1800;
    const t0 = 1_800_000_000; // a multiple of the panel's 1 min step
    const values: number[] = [];
    for (let i = 0; i < 60; i++) {
      const text = await d.scrape();
      store.scrape(t0 + i * HALF_HOUR, text, { instance: 'node1:9879' });
      values.push(valueOf(text, 'poise_motions_succeeded_total', { via: 'ha' })!);
      await d.round();
    }
    await d.daemon.close();
    const succeeded = (t: number) => evaluatePromql(panel.succeeded!, t, store)[0]?.value;
    // a window from before the first scrape: every motion up to scrape 47
    expect(succeeded(t0 + 47 * HALF_HOUR + 60)).toBe(values[47]);
    // a window that starts just after scrape k: the rise from scrape k to the newest (k + 48)
    let cut = 0;
    for (let k = 1; k <= 11; k++) {
      expect(succeeded(t0 + (k + 48) * HALF_HOUR + 60), `k ${k}`).toBe(values[k + 48]! - values[k]!);
      if (values[k]! > 0 && values[k]! < values[k + 48]!) cut++;
    }
    // some of those windows leave motions out and keep others: the cut is tested, not just the whole run
    expect(cut).toBeGreaterThan(0);
  }, 60_000);
});
