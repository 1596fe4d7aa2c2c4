/**
 * Just enough of Prometheus for the dashboard's tests: the text exposition format parsed into
 * samples, scrapes stored as series with `instance` and `job` added, and an evaluator for the
 * PromQL subset the dashboard's count panels use — selectors with `=`, `!=`, `=~`, `!~`
 * matchers and `offset`, range selectors, subqueries `(…)[range:step]`, `sum`, `sum_over_time`,
 * `last_over_time`, binary `-`, `>=` (filter) and `or` — with Prometheus's semantics: a 5 min
 * lookback for instant selectors, ranges left-open (`(t - range, t]`), subquery steps at the
 * multiples of the step, arithmetic and `*_over_time` drop the metric name, vectors match on
 * their labels without it. Anything else is refused with the construct named, so a panel that
 * grows a new construct fails its test instead of being evaluated wrongly.
 */

/** Instant selectors look this far back for a sample (Prometheus's default `lookback-delta`). */
const LOOKBACK_SECONDS = 300;

type Labels = Readonly<Record<string, string>>;

/** One sample of a scrape: the metric name, its labels, its value. */
export interface ExposedSample {
  readonly name: string;
  readonly labels: Labels;
  readonly value: number;
}

/** `name{a="b",…} value` lines of a `/metrics` reply (comments skipped; no timestamps expected). */
export function parseExposition(text: string): ExposedSample[] {
  const out: ExposedSample[] = [];
  for (const [index, line] of text.split('\n').entries()) {
    if (line === '' || line.startsWith('#')) continue;
    const where = `/metrics line ${index + 1} '${line}'`;
    const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0];
    if (name === undefined) throw new Error(`${where}: no metric name`);
    let i = name.length;
    const labels: Record<string, string> = {};
    if (line[i] === '{') {
      i++;
      while (line[i] !== '}') {
        const key = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i))?.[0];
        if (key === undefined || line.slice(i + key.length, i + key.length + 2) !== '="')
          throw new Error(`${where}: bad label at column ${i + 1}`);
        i += key.length + 2;
        let value = '';
        while (line[i] !== '"') {
          if (i >= line.length) throw new Error(`${where}: unterminated label value`);
          if (line[i] === '\\') {
            const next = line[i + 1];
            value += next === 'n' ? '\n' : (next ?? '');
            i += 2;
          } else value += line[i++];
        }
        labels[key] = value;
        i++;
        if (line[i] === ',') i++;
      }
      i++;
    }
    const rest = line.slice(i).trim().split(/\s+/);
    const value = rest[0] === '+Inf' ? Infinity : rest[0] === '-Inf' ? -Infinity : Number(rest[0]);
    if (rest.length !== 1 || (Number.isNaN(value) && rest[0] !== 'NaN'))
      throw new Error(`${where}: expected one value after the labels`);
    out.push({ name, labels, value });
  }
  return out;
}

/** A stored series: its labels (with `__name__`) and its samples in time order (seconds). */
interface Series {
  readonly labels: Labels;
  readonly points: { t: number; v: number }[];
}

/** What Prometheus keeps of the scrapes of one or more targets. */
export class SeriesStore {
  private readonly series = new Map<string, Series>();

  /** Stores a scrape of `target` at `time` (seconds): each sample with `instance` and `job` added. */
  scrape(time: number, text: string, target: { readonly instance: string; readonly job?: string }): void {
    for (const s of parseExposition(text)) {
      const labels = { ...s.labels, __name__: s.name, instance: target.instance, job: target.job ?? 'poise' };
      const key = signature(labels, true);
      let series = this.series.get(key);
      if (!series) this.series.set(key, (series = { labels, points: [] }));
      const last = series.points.at(-1);
      if (last !== undefined && last.t >= time)
        throw new Error(`scrape at ${time} is not after the last one of '${key}' (${last.t})`);
      series.points.push({ t: time, v: s.value });
    }
  }

  /** The series whose labels satisfy every matcher. */
  select(matchers: readonly Matcher[]): readonly Series[] {
    return [...this.series.values()].filter((s) => matchers.every((m) => matches(m, s.labels[m.label] ?? '')));
  }
}

interface Matcher {
  readonly label: string;
  readonly op: '=' | '!=' | '=~' | '!~';
  readonly value: string;
}

function matches(m: Matcher, value: string): boolean {
  switch (m.op) {
    case '=':
      return value === m.value;
    case '!=':
      return value !== m.value;
    case '=~':
      return new RegExp(`^(?:${m.value})$`).test(value);
    case '!~':
      return !new RegExp(`^(?:${m.value})$`).test(value);
  }
}

/** The identity of a label set, with or without the metric name (vector matching ignores it). */
function signature(labels: Labels, withName: boolean): string {
  return JSON.stringify(
    Object.keys(labels)
      .filter((k) => withName || k !== '__name__')
      .sort()
      .map((k) => [k, labels[k]]),
  );
}

function withoutName(labels: Labels): Labels {
  const { __name__: _, ...rest } = labels;
  return rest;
}

type Node =
  | { readonly type: 'number'; readonly value: number }
  | { readonly type: 'selector'; readonly matchers: readonly Matcher[]; readonly offset: number }
  | { readonly type: 'range'; readonly selector: Node; readonly range: number; readonly offset: number }
  | {
      readonly type: 'subquery';
      readonly expr: Node;
      readonly range: number;
      readonly step: number;
      readonly offset: number;
    }
  | { readonly type: 'call'; readonly fn: 'sum' | 'sum_over_time' | 'last_over_time'; readonly arg: Node }
  | { readonly type: 'binary'; readonly op: '-' | '>=' | 'or'; readonly lhs: Node; readonly rhs: Node };

const DURATION_UNITS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** Parses the subset (see the file's comment); throws naming the first construct it does not know. */
export function parsePromql(expr: string): Node {
  const tokens = expr.match(
    /\s+|[a-zA-Z_][a-zA-Z0-9_:]*|\d+[smhd]|\d+(?:\.\d+)?|"(?:[^"\\]|\\.)*"|=~|!~|!=|>=|[-(){}[\],:=]/g,
  );
  if (tokens === null || tokens.join('') !== expr) throw new Error(`promql: cannot tokenise '${expr}'`);
  const list = tokens.filter((t) => t.trim() !== '');
  let i = 0;
  const peek = () => list[i];
  const next = () => {
    const t = list[i++];
    if (t === undefined) throw new Error(`promql: '${expr}' ends early`);
    return t;
  };
  const expect = (t: string) => {
    const got = next();
    if (got !== t) throw new Error(`promql: expected '${t}', got '${got}' in '${expr}'`);
  };
  const duration = (): number => {
    const t = next();
    const m = /^(\d+)([smhd])$/.exec(t);
    if (!m) throw new Error(`promql: expected a duration, got '${t}'`);
    return Number(m[1]) * DURATION_UNITS[m[2]!]!;
  };
  const orExpr = (): Node => {
    let lhs = cmpExpr();
    while (peek() === 'or') {
      i++;
      lhs = { type: 'binary', op: 'or', lhs, rhs: cmpExpr() };
    }
    return lhs;
  };
  const cmpExpr = (): Node => {
    const lhs = subExpr();
    if (peek() !== '>=') return lhs;
    i++;
    return { type: 'binary', op: '>=', lhs, rhs: subExpr() };
  };
  const subExpr = (): Node => {
    let lhs = postfix();
    while (peek() === '-') {
      i++;
      lhs = { type: 'binary', op: '-', lhs, rhs: postfix() };
    }
    return lhs;
  };
  const postfix = (): Node => {
    let node = primary();
    for (;;) {
      if (peek() === '[') {
        i++;
        const range = duration();
        if (peek() === ':') {
          i++;
          const step = duration();
          expect(']');
          node = { type: 'subquery', expr: node, range, step, offset: 0 };
        } else {
          expect(']');
          if (node.type !== 'selector' || node.offset !== 0)
            throw new Error(`promql: a range needs a selector before it in '${expr}'`);
          node = { type: 'range', selector: node, range, offset: 0 };
        }
      } else if (peek() === 'offset') {
        i++;
        const offset = duration();
        if (node.type !== 'selector' && node.type !== 'range' && node.type !== 'subquery')
          throw new Error(`promql: offset after a ${node.type} in '${expr}'`);
        node = { ...node, offset };
      } else return node;
    }
  };
  const primary = (): Node => {
    const t = next();
    if (t === '(') {
      const inner = orExpr();
      expect(')');
      return inner;
    }
    if (/^\d/.test(t)) return { type: 'number', value: Number(t) };
    if (t === 'sum' || t === 'sum_over_time' || t === 'last_over_time') {
      if (peek() !== '(') throw new Error(`promql: '${t}' with a modifier ('${peek()}') is not in the subset`);
      i++;
      const arg = orExpr();
      expect(')');
      return { type: 'call', fn: t, arg };
    }
    if (!/^[a-zA-Z_:]/.test(t) || peek() === '(') throw new Error(`promql: '${t}' is not in the subset`);
    const matchers: Matcher[] = [{ label: '__name__', op: '=', value: t }];
    if (peek() === '{') {
      i++;
      while (peek() !== '}') {
        const label = next();
        const op = next();
        if (op !== '=' && op !== '!=' && op !== '=~' && op !== '!~') throw new Error(`promql: matcher '${op}'`);
        const quoted = next();
        if (!quoted.startsWith('"')) throw new Error(`promql: expected a quoted value, got '${quoted}'`);
        matchers.push({ label, op, value: JSON.parse(quoted) as string });
        if (peek() === ',') i++;
      }
      i++;
    }
    return { type: 'selector', matchers, offset: 0 };
  };
  const tree = orExpr();
  if (i !== list.length) throw new Error(`promql: unexpected '${list[i]}' in '${expr}'`);
  return tree;
}

type Sample = { readonly labels: Labels; readonly value: number };
type RangeSeries = { readonly labels: Labels; readonly points: readonly { t: number; v: number }[] };
type Value =
  | { readonly kind: 'scalar'; readonly value: number }
  | { readonly kind: 'vector'; readonly samples: readonly Sample[] }
  | { readonly kind: 'matrix'; readonly series: readonly RangeSeries[] };

function vector(v: Value, what: string): readonly Sample[] {
  if (v.kind !== 'vector') throw new Error(`promql: ${what} takes an instant vector, got a ${v.kind}`);
  return v.samples;
}

function evaluateNode(node: Node, t: number, store: SeriesStore): Value {
  switch (node.type) {
    case 'number':
      return { kind: 'scalar', value: node.value };
    case 'selector': {
      const at = t - node.offset;
      const samples: Sample[] = [];
      for (const s of store.select(node.matchers)) {
        // the newest sample at or before `at`, if it is within the lookback
        const last = s.points.filter((p) => p.t <= at).at(-1);
        if (last !== undefined && last.t > at - LOOKBACK_SECONDS) samples.push({ labels: s.labels, value: last.v });
      }
      return { kind: 'vector', samples };
    }
    case 'range': {
      const end = t - node.offset;
      const sel = node.selector as Extract<Node, { type: 'selector' }>;
      const series = store
        .select(sel.matchers)
        .map((s) => ({ labels: s.labels, points: s.points.filter((p) => p.t <= end && p.t > end - node.range) }))
        .filter((s) => s.points.length > 0);
      return { kind: 'matrix', series };
    }
    case 'subquery': {
      const end = t - node.offset;
      const bySeries = new Map<string, { labels: Labels; points: { t: number; v: number }[] }>();
      // steps at the multiples of the step in (end - range, end], as Prometheus aligns them
      for (let step = Math.floor(end / node.step) * node.step; step > end - node.range; step -= node.step) {
        for (const s of vector(evaluateNode(node.expr, step, store), 'a subquery')) {
          const key = signature(s.labels, true);
          let entry = bySeries.get(key);
          if (!entry) bySeries.set(key, (entry = { labels: s.labels, points: [] }));
          entry.points.unshift({ t: step, v: s.value });
        }
      }
      return { kind: 'matrix', series: [...bySeries.values()] };
    }
    case 'call': {
      const arg = evaluateNode(node.arg, t, store);
      if (node.fn === 'sum') {
        const samples = vector(arg, 'sum');
        return {
          kind: 'vector',
          samples: samples.length === 0 ? [] : [{ labels: {}, value: samples.reduce((a, s) => a + s.value, 0) }],
        };
      }
      if (arg.kind !== 'matrix') throw new Error(`promql: ${node.fn} takes a range vector, got a ${arg.kind}`);
      return {
        kind: 'vector',
        samples: arg.series.map((s) => ({
          labels: withoutName(s.labels),
          value: node.fn === 'sum_over_time' ? s.points.reduce((a, p) => a + p.v, 0) : s.points.at(-1)!.v,
        })),
      };
    }
    case 'binary': {
      const lhs = evaluateNode(node.lhs, t, store);
      const rhs = evaluateNode(node.rhs, t, store);
      if (node.op === '>=') {
        if (rhs.kind !== 'scalar') throw new Error('promql: >= is in the subset with a number on its right only');
        return { kind: 'vector', samples: vector(lhs, '>=').filter((s) => s.value >= rhs.value) };
      }
      const left = vector(lhs, node.op);
      const right = vector(rhs, node.op);
      if (node.op === 'or') {
        const seen = new Set(left.map((s) => signature(s.labels, false)));
        return { kind: 'vector', samples: [...left, ...right.filter((s) => !seen.has(signature(s.labels, false)))] };
      }
      // one-to-one matching on the labels without the metric name (several matches: an error, as in Prometheus)
      const byKey = new Map<string, Sample>();
      for (const s of right) {
        const key = signature(s.labels, false);
        if (byKey.has(key)) throw new Error(`promql: many-to-one matching on the right of '-' (${key})`);
        byKey.set(key, s);
      }
      const samples: Sample[] = [];
      for (const s of left) {
        const match = byKey.get(signature(s.labels, false));
        if (match) samples.push({ labels: withoutName(s.labels), value: s.value - match.value });
      }
      return { kind: 'vector', samples };
    }
  }
}

/** The instant value of `expr` at `time` (seconds) over `store`: its samples, labels without `__name__` where PromQL drops it. */
export function evaluatePromql(expr: string, time: number, store: SeriesStore): readonly Sample[] {
  return vector(evaluateNode(parsePromql(expr), time, store), 'the query');
}
