/**
 * The Grafana dashboard of poise-manager (`tools/grafana/poise-manager.json`): a document Grafana 10 and 11
 * import (schema version, a `datasource` variable every panel and query uses, unique panel ids,
 * a place on the grid), and every metric a query names is one the daemon exports: checked
 * against the `/metrics` of a daemon that ran the bundled scenario on the simulator.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { main } from '../cli/main';
import { captureIo } from '../testing/support';

interface Target {
  refId?: string;
  expr?: string;
  legendFormat?: string;
  datasource?: { type?: string; uid?: string };
}
interface Panel {
  id?: number;
  type?: string;
  title?: string;
  gridPos?: { x: number; y: number; w: number; h: number };
  datasource?: { type?: string; uid?: string };
  targets?: Target[];
}
interface Dashboard {
  uid?: string;
  title?: string;
  schemaVersion?: number;
  templating?: { list?: { name: string; type: string; query?: unknown; datasource?: unknown }[] };
  panels?: Panel[];
}

const dashboard = JSON.parse(
  readFileSync(new URL('../../../../tools/grafana/poise-manager.json', import.meta.url), 'utf8'),
) as Dashboard;
const panels = dashboard.panels ?? [];
const queries = panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title ?? '?', ...t })));

/** The `poise_*` metric names in a PromQL expression. */
function metricNames(expr: string): string[] {
  return [...new Set(expr.match(/\bpoise_[a-z0-9_]+/g) ?? [])];
}

/** The metrics of a daemon that ran the bundled scenario on the simulator, as Prometheus scrapes them. */
async function simulatorMetrics(): Promise<string> {
  const c = captureIo();
  let port = 0;
  const run = main(['--sim', '--listen', '127.0.0.1:0'], c.io, { onListening: (a) => (port = a.port) });
  // with --listen the daemon keeps serving after the scenario's end, until SIGTERM
  for (let i = 0; i < 600 && !c.logs.some((l) => l.includes('the status page stays up')); i++)
    await new Promise((r) => setTimeout(r, 50));
  expect(
    c.logs.some((l) => l.includes('the status page stays up')),
    c.logs.slice(-3).join('\n'),
  ).toBe(true);
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  c.handlers.get('SIGTERM')!();
  expect(await run).toBe(0);
  return text;
}

describe('the Grafana dashboard', () => {
  it('is a dashboard Grafana 10 and 11 import: schema version, uid, panels on the grid with unique ids', () => {
    // Grafana 10.0 writes schema version 38, 11.x 39 to 41; both migrate anything from 36 on
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    expect(dashboard.schemaVersion).toBeLessThanOrEqual(41);
    expect(dashboard.uid).toBe('poise-manager');
    expect(dashboard.title).toBe('poise-manager');
    const ids = panels.map((p) => p.id);
    expect(ids.every((id) => Number.isInteger(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of panels) {
      expect(p.gridPos, p.title).toBeDefined();
      expect(p.gridPos!.x + p.gridPos!.w, p.title).toBeLessThanOrEqual(24);
    }
    expect(queries.length).toBeGreaterThan(10);
  });

  it('has a datasource variable of type prometheus, which every panel and query uses', () => {
    const variables = dashboard.templating?.list ?? [];
    expect(variables.find((v) => v.name === 'datasource')).toMatchObject({ type: 'datasource', query: 'prometheus' });
    for (const p of panels.filter((x) => x.type !== 'row'))
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
    for (const q of queries) {
      expect(q.datasource, q.panel).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(q.refId, q.panel).toMatch(/^[A-Z]$/);
    }
    for (const v of variables.filter((x) => x.type === 'query'))
      expect(v.datasource, v.name).toEqual({ type: 'prometheus', uid: '${datasource}' });
  });

  it('tells the instances apart in every node series: legends name the instance, aggregations keep it', () => {
    const nodeQueries = queries.filter((q) => /\bpoise_node_/.test(q.expr ?? ''));
    expect(nodeQueries.length).toBeGreaterThanOrEqual(4);
    for (const q of nodeQueries) {
      expect(q.legendFormat, q.panel).toMatch(/^\{\{instance\}\} \{\{node\}\}/);
      // an aggregation over node series keeps both labels
      for (const by of q.expr!.matchAll(/\bby \(([^)]*)\)/g))
        expect(by[1]!.split(/,\s*/), q.panel).toEqual(expect.arrayContaining(['instance', 'node']));
    }
  });

  it('queries only metrics the daemon exports (its /metrics after a simulated scenario)', async () => {
    const text = await simulatorMetrics();
    // a metric exists once declared
    const declared = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
    const exported = new Set(declared.keys());
    for (const [name, type] of declared)
      if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) exported.add(`${name}${s}`);
    const used = new Set<string>();
    for (const q of queries) {
      expect(q.expr, q.panel).toEqual(expect.any(String));
      const names = metricNames(q.expr!);
      expect(names.length, `${q.panel}: ${q.expr}`).toBeGreaterThan(0);
      for (const name of names) {
        expect(exported.has(name), `${q.panel}: '${name}' is not in /metrics`).toBe(true);
        used.add(name);
      }
    }
    const variableQuery = JSON.stringify(dashboard.templating?.list ?? []);
    for (const name of metricNames(variableQuery)) expect(exported.has(name), name).toBe(true);
    // the list: imbalance and node loads, decisions and skips, motions, API errors, round duration
    for (const name of [
      'poise_imbalance_ratio',
      'poise_node_load_ratio',
      'poise_round_decisions_total',
      'poise_round_skips_total',
      'poise_motions_issued_total',
      'poise_motions_succeeded_total',
      'poise_motions_failed_total',
      'poise_api_errors_total',
      'poise_round_duration_seconds_bucket',
    ])
      expect(used.has(name), name).toBe(true);
    // the scenario moved guests: the series the dashboard shows are there
    expect(text).toMatch(/^poise_motions_succeeded_total\{via="ha"\} [1-9]/m);
    // the counters the count panels read have their series from the start: failed motions at 0, not absent
    expect(text).toMatch(/^poise_motions_failed_total\{via="ha"\} 0$/m);
    // every resource a query picks is one the node metrics carry (one word for memory in both)
    for (const q of queries)
      for (const m of q.expr!.matchAll(/\b(poise_node_[a-z0-9_]+)\{[^}]*resource="([a-z]+)"/g))
        expect(text, `${q.panel}: ${m[1]}{resource="${m[2]}"}`).toMatch(
          new RegExp(`^${m[1]}\\{[^}]*resource="${m[2]}"`, 'm'),
        );
    // (the simulator reports no pressure: the pressure gauge's `memory` is checked in metrics.test.ts)
    for (const resource of ['cpu', 'memory', 'total'])
      expect(text, resource).toMatch(new RegExp(`^poise_node_load_ratio\\{[^}]*resource="${resource}"`, 'm'));
  }, 60_000);
});
