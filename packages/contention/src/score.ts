import { ContentionError, showValue } from './errors';
import { type FittedModel, type PressureDimension, type PressurePrediction, checkLoadArgument } from './fit';
import { type MigrationEstimate, type MigrationSettings, estimateMigration, migrationSettings } from './migration';

/**
 * A node as a move changes it, in the host's units (those of `NodeTelemetry` of
 * `@poise/policy`): everything on the node, so its load is `cpu / maxcpu` and `mem / maxmem`.
 */
export interface NodeLoad {
  readonly node: string;
  /** cpu in use, cores: a finite number ≥ 0. */
  readonly cpu: number;
  /** Cores: a finite number > 0. */
  readonly maxcpu: number;
  /** Memory in use, bytes: a finite number ≥ 0. */
  readonly mem: number;
  /** Physical memory, bytes: a finite number > 0. */
  readonly maxmem: number;
}

/** A node and how much of its guests' time wants to run there (see {@link guestActivity}). */
export interface NodeContention extends NodeLoad {
  /** The sum of its guests' activity: how many guests' worth of time wants cpu (finite, ≥ 0). */
  readonly activity: number;
}

/** What a move takes from the source and puts on the target. */
export interface MovedLoad {
  /** cpu the moved guests use, cores (finite, ≥ 0). */
  readonly cpu: number;
  /** Memory the moved guests use, bytes (finite, ≥ 0). */
  readonly mem: number;
}

/** The moved guests (one, or a bundle that moves together). */
export interface MovedBundle extends MovedLoad {
  /** Their activity summed (see {@link guestActivity}; finite, ≥ 0). */
  readonly activity: number;
  /** How many guests move (an integer ≥ 1). */
  readonly guests: number;
  /** Memory the migration copies, bytes (finite, ≥ 0): the host-side footprint when known, else `mem`. */
  readonly transferBytes: number;
  /**
   * Their virtual cpus summed (an integer ≥ 1), for the migration model's dirty rate and the
   * guests' activity; absent: `cpu / activity` rounded up (1 without activity).
   */
  readonly vcpus?: number;
}

/** A pressure before and after a move. */
export interface PressureChange {
  readonly before: PressurePrediction;
  readonly after: PressurePrediction;
}

/** A node's predicted pressures before and after a move. */
export interface NodePressureChange {
  readonly node: string;
  readonly cpu: PressureChange;
  readonly mem: PressureChange;
}

/** The predicted pressures of both ends of a move (the lab's hook, see {@link predictMovePressure}). */
export interface MovePressure {
  readonly source: NodePressureChange;
  readonly target: NodePressureChange;
}

/**
 * What a migration costs and how long the gain is counted (see {@link CONTENTION_DEFAULTS}).
 * Every field is a finite number in its range.
 */
export interface ContentionOptions {
  /** How long a placement is expected to hold, seconds (> 0): the saved contention is counted over it. */
  readonly horizonSeconds: number;
  /** Migration throughput, bytes per second (> 0): how long the memory copy takes. */
  readonly bandwidthBytesPerSecond: number;
  /** Fixed time of a migration besides the copy, seconds (≥ 0). */
  readonly setupSeconds: number;
  /** Share of a moving guest's time lost while it is copied (dirty-page tracking), 0..1. */
  readonly stallShare: number;
  /** A moving guest's pause at the switch-over, seconds (≥ 0). */
  readonly downtimeSeconds: number;
  /**
   * Cost–benefit: the migration model that prices a move (`estimateMigration`, its settings
   * checked by `migrationSettings`), or `null` for the fixed price above (`setupSeconds`,
   * `bandwidthBytesPerSecond`, `stallShare`, `downtimeSeconds`). With a model, the move costs
   * the moving guests the model's `guestSeconds`, and the guests of both nodes what the
   * transfer's cpu (`transferCpuCores` on each end, for the migration's duration) makes them
   * wait by the same pressure predictions; a migration the model sees fail saves nothing.
   */
  readonly migration: MigrationSettings | null;
}

/**
 * Defaults, judgement rather than measurement (the simulator does not model the migration
 * itself yet):
 * - horizon 600 s: the recommended cooldown (`ha-auto-rebalance-cooldown`), the shortest time the
 *   balancer leaves a moved guest where it is;
 * - 512 MiB/s and 5 s set-up: a live migration on a 10 GbE migration network, dirty pages
 *   copied again included;
 * - 10 % of the guest's time lost while it is copied, and 0.3 s paused at the switch-over.
 */
export const CONTENTION_DEFAULTS: ContentionOptions = {
  horizonSeconds: 600,
  bandwidthBytesPerSecond: 512 * 1024 ** 2,
  setupSeconds: 5,
  stallShare: 0.1,
  downtimeSeconds: 0.3,
  migration: null,
};

/** A move's predicted effect on guest contention (see {@link assessMove}). */
export interface MoveAssessment extends MovePressure {
  /** Guest contention of the two nodes now, guest-seconds per second (predicted at their current loads). */
  readonly rateBefore: number;
  /** ... and after the move. */
  readonly rateAfter: number;
  /** `(rateBefore − rateAfter) / rateBefore` (0 when nothing waits now): the share of the two nodes' contention the move relieves. */
  readonly relative: number;
  /** The moving guests' own contention now, guest-seconds per second: their activity at the source's pressure now. */
  readonly movingRate: number;
  /** The cores the moving guests use now (`bundle.cpu`): what the move frees on the source. */
  readonly movedCpu: number;
  /** How long the migration takes, seconds: set-up plus the copy. */
  readonly migrationSeconds: number;
  /** Contention saved over the horizon once the migration is done, guest-seconds (negative when the move makes it worse). */
  readonly savedSeconds: number;
  /**
   * What the migration costs, guest-seconds (≥ 0): the moving guests' own cost, plus (with the
   * migration model) `transferSeconds`.
   */
  readonly costSeconds: number;
  /** With the migration model: what the transfer's cpu makes the guests of both nodes wait, guest-seconds (≥ 0); else 0. */
  readonly transferSeconds: number;
  /** With the migration model: its estimate for this move (`converged` false: the move would fail); else `null`. */
  readonly migration: MigrationEstimate | null;
  /** The horizon the saving was counted over, seconds (the move's own, else the options'). */
  readonly horizonSeconds: number;
  /** The lowest confidence of the eight predictions, 0..1. */
  readonly confidence: number;
  /**
   * The part of `savedSeconds` that does not rest on the source's pressure falling, guest-seconds:
   * the saving were the source to keep its pressure now (pressure does not rise when load
   * leaves): the moving guests stop waiting there and wait as predicted on the target. The rest,
   * `savedSeconds − escapeSeconds`, is what the guests staying on the source gain from its
   * predicted fall.
   */
  readonly escapeSeconds: number;
  /** The lowest confidence of the predictions `escapeSeconds` rests on (both nodes now, the target after), 0..1. */
  readonly escapeConfidence: number;
  /**
   * The score, guest-seconds, higher is better: each of the two parts of the saving discounted
   * by its own confidence when it is a gain (`escapeSeconds · escapeConfidence` and
   * `(savedSeconds − escapeSeconds) · confidence`; an uncertain loss is not discounted), less
   * `costSeconds`. A prediction far below the loads a source was seen at weakens only the
   * second part: a move off a saturated node whose relief the model cannot yet tell still
   * counts what the moving guests escape.
   */
  readonly netSeconds: number;
  /** `usage` when any of the eight predictions fell back to the usage-based prior, else `learned`. */
  readonly basis: 'learned' | 'usage';
}

const bad = (field: string, expected: string, value: unknown) =>
  new ContentionError('invalid-argument', `${field} must be ${expected}, got ${showValue(value)}`);

/** Largest accepted quantity (cores, bytes, activity): 2^53, as `@poise/policy`'s telemetry; keeps every sum and product finite. */
const QUANTITY_MAX = 2 ** 53;

/** Largest accepted duration option, seconds (about 31 years). */
const SECONDS_MAX = 1e9;

function finite(value: unknown, field: string, positive = false): number {
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < 0 ||
    (positive && value === 0) ||
    value > QUANTITY_MAX
  ) {
    throw bad(field, `a finite number ${positive ? '> 0' : '>= 0'} and <= 2^53`, value);
  }
  return value;
}

function checkNode(value: unknown, field: string, withActivity: boolean): NodeContention {
  if (typeof value !== 'object' || value === null) throw bad(field, 'an object', value);
  const n = value as Record<string, unknown>;
  if (typeof n.node !== 'string' || n.node === '') throw bad(`${field}.node`, 'a non-empty string', n.node);
  return {
    node: n.node,
    cpu: finite(n.cpu, `${field}.cpu`),
    maxcpu: finite(n.maxcpu, `${field}.maxcpu`, true),
    mem: finite(n.mem, `${field}.mem`),
    maxmem: finite(n.maxmem, `${field}.maxmem`, true),
    activity: withActivity ? finite(n.activity, `${field}.activity`) : 0,
  };
}

function checkMoved(value: unknown, field: string): MovedLoad {
  if (typeof value !== 'object' || value === null) throw bad(field, 'an object', value);
  const m = value as Record<string, unknown>;
  return { cpu: finite(m.cpu, `${field}.cpu`), mem: finite(m.mem, `${field}.mem`) };
}

function checkHorizon(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || !(value > 0) || value > SECONDS_MAX)
    throw bad('move.horizonSeconds', 'a number of seconds in (0, 1e9]', value);
  return value;
}

function checkVcpus(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > QUANTITY_MAX)
    throw bad('move.bundle.vcpus', 'an integer >= 1', value);
  return value;
}

/** A bundle's virtual cpus from its cores in use and its activity (`cpu / maxcpu` per guest). */
function impliedVcpus(cpu: number, activity: number): number {
  return activity > 0 ? Math.max(1, Math.ceil(cpu / activity - 1e-9)) : 1;
}

/**
 * Checks options (a partial set; missing fields take {@link CONTENTION_DEFAULTS}) and returns
 * them complete. Throws {@link ContentionError} `invalid-options` naming the field.
 */
export function contentionOptions(options: Partial<ContentionOptions> = {}): ContentionOptions {
  const o = { ...CONTENTION_DEFAULTS, ...options };
  const check = (field: keyof ContentionOptions, ok: (v: number) => boolean, expected: string) => {
    const v = o[field];
    if (typeof v !== 'number' || !Number.isFinite(v) || !ok(v)) {
      throw new ContentionError(
        'invalid-options',
        `contention option '${field}' must be ${expected}, got ${showValue(v)}`,
      );
    }
  };
  check('horizonSeconds', (v) => v > 0 && v <= SECONDS_MAX, 'a number of seconds in (0, 1e9]');
  check('bandwidthBytesPerSecond', (v) => v >= 1 && v <= QUANTITY_MAX, 'a number of bytes per second in 1..2^53');
  check('setupSeconds', (v) => v >= 0 && v <= SECONDS_MAX, 'a number of seconds in 0..1e9');
  check('stallShare', (v) => v >= 0 && v <= 1, 'a share in 0..1');
  check('downtimeSeconds', (v) => v >= 0 && v <= SECONDS_MAX, 'a number of seconds in 0..1e9');
  if (o.migration !== null) {
    if (typeof o.migration !== 'object')
      throw new ContentionError(
        'invalid-options',
        `contention option 'migration' must be null or migration settings, got ${showValue(o.migration)}`,
      );
    return { ...o, migration: migrationSettings(o.migration) };
  }
  return o;
}

/**
 * How much of a guest's time wants to run: `cpu / maxcpu` (cores in use over its virtual
 * cores), at most 1; a guest with no cores configured counts 1 while it uses any cpu. Bad
 * input (not a finite number ≥ 0) throws `invalid-argument`.
 */
export function guestActivity(cpu: number, maxcpu: number): number {
  finite(cpu, 'cpu');
  finite(maxcpu, 'maxcpu');
  if (maxcpu === 0) return cpu > 0 ? 1 : 0;
  return Math.min(1, cpu / maxcpu);
}

/**
 * A node's guest contention, guest-seconds per second: each unit of activity waits the share of
 * time the node's work waits for cpu or memory, `activity · min(1, (cpu% + mem%) / 100)`.
 */
export function contentionRate(activity: number, cpuPercent: number, memPercent: number): number {
  return activity * Math.min(1, (cpuPercent + memPercent) / 100);
}

/** What `movePressure` asks of a model: the `predict` of a {@link FittedModel}. */
type Predict = FittedModel['predict'];

/** The loads a scorer remembers the prediction of, per node and dimension. */
interface Remembered {
  /** The first load asked (a node's load now: every move asks for it). */
  readonly first: number;
  readonly firstPrediction: PressurePrediction;
  /** The last other load asked (a source's load after its guest leaves: every target of that guest asks for it). */
  last: number;
  lastPrediction: PressurePrediction | undefined;
}

/**
 * `model.predict`, remembering per node and dimension the first load asked and the last other
 * one: scoring a round's moves asks for each node's load now with every move, and for a
 * source's load after a guest leaves with every target of that guest. The model is pure, so
 * the answer is the one `model.predict` gives.
 */
function rememberingPredict(model: FittedModel): Predict {
  const cpu = new Map<string, Remembered>();
  const mem = new Map<string, Remembered>();
  return (node, dimension, load) => {
    const byNode = dimension === 'cpu' ? cpu : dimension === 'mem' ? mem : undefined;
    if (!byNode) return model.predict(node, dimension, load);
    const r = byNode.get(node);
    if (!r) {
      const p = model.predict(node, dimension, load);
      byNode.set(node, { first: load, firstPrediction: p, last: NaN, lastPrediction: undefined });
      return p;
    }
    if (load === r.first) return r.firstPrediction;
    if (load === r.last) return r.lastPrediction!;
    const p = model.predict(node, dimension, load);
    r.last = load;
    r.lastPrediction = p;
    return p;
  };
}

/** A node's load (cores or bytes over capacity) checked as a prediction's argument. */
function loadOf(used: number, capacity: number, node: string): number {
  const load = used / capacity;
  return load >= 0 && load < Infinity ? load : checkLoadArgument(load, `the load of '${node}'`);
}

function change(
  predict: Predict,
  node: string,
  dimension: PressureDimension,
  before: number,
  after: number,
): PressureChange {
  return { before: predict(node, dimension, before), after: predict(node, dimension, after) };
}

/** A node's pressures before and after its cpu and memory in use become `cpu` and `mem`. */
function nodeChange(predict: Predict, n: NodeLoad, cpu: number, mem: number): NodePressureChange {
  return {
    node: n.node,
    cpu: change(predict, n.node, 'cpu', n.cpu / n.maxcpu, loadOf(cpu, n.maxcpu, n.node)),
    mem: change(predict, n.node, 'mem', n.mem / n.maxmem, loadOf(mem, n.maxmem, n.node)),
  };
}

function movePressure(predict: Predict, source: NodeLoad, target: NodeLoad, moved: MovedLoad): MovePressure {
  return {
    source: nodeChange(predict, source, Math.max(0, source.cpu - moved.cpu), Math.max(0, source.mem - moved.mem)),
    target: nodeChange(predict, target, target.cpu + moved.cpu, target.mem + moved.mem),
  };
}

/** `gain` counted with `trust` when it is a gain (a loss counts whole). */
function discounted(gain: number, trust: number): number {
  return gain > 0 ? gain * trust : gain;
}

/** The lower of `confidence` and the prediction's. */
function lower(confidence: number, p: PressurePrediction): number {
  return p.confidence < confidence ? p.confidence : confidence;
}

/**
 * The lab's hook: the pressures the model predicts for the source and the target of a move,
 * before it (at their current loads) and after it (the source without `moved`, the target
 * with it). Pure: compare `after` with the pressure the nodes show once the move is done.
 * Throws {@link ContentionError} `invalid-argument` naming the field of a bad argument
 * (`source.maxcpu must be a finite number > 0, got 0`), or when source and target are the same node.
 */
export function predictMovePressure(
  model: FittedModel,
  source: NodeLoad,
  target: NodeLoad,
  moved: MovedLoad,
): MovePressure {
  const s = checkNode(source, 'source', false);
  const t = checkNode(target, 'target', false);
  if (s.node === t.node) throw bad('target.node', `another node than the source`, t.node);
  return movePressure(
    (node, dimension, load) => model.predict(node, dimension, load),
    s,
    t,
    checkMoved(moved, 'moved'),
  );
}

/** A move to score: its two nodes (with their guests' activity) and what moves. */
export interface MoveInput {
  readonly source: NodeContention;
  readonly target: NodeContention;
  readonly bundle: MovedBundle;
  /** How long the gain is counted for this move, seconds (in (0, 1e9]; e.g. the source's learned hot spell); absent: the options'. */
  readonly horizonSeconds?: number;
}

/**
 * The guest-centric score of a move: the guest contention-seconds it is predicted to save on
 * its two nodes over the horizon, net of what the migration costs the moving guests.
 *
 * With `A` a node's activity and `P` its predicted cpu and memory pressures (at its current
 * load, and at its load after the move), a node's rate is `contentionRate`; the move
 * changes the source to `A − a`, `P(load − moved)` and the target to `A + a`, `P(load + moved)`.
 * The migration takes `T = setup + transferBytes / bandwidth` seconds; its gain counts from
 * then until the horizon, `saved = (rateBefore − rateAfter) · max(0, horizon − T)`, and it
 * costs the moving guests `guests · (T · stallShare + downtime)`. The score `netSeconds`
 * splits the saving in two (see `escapeSeconds`): what the moving guests escape, discounted by
 * the confidence of the predictions it rests on, and the relief of the guests that stay,
 * discounted by the lowest confidence of all eight (see the README's worked example).
 *
 * Pure and deterministic; every result finite. Throws {@link ContentionError} naming the field
 * of a bad argument or option. To score many moves on one model, {@link moveScorer} checks the
 * options once.
 */
export function assessMove(
  model: FittedModel,
  move: MoveInput,
  options: Partial<ContentionOptions> = {},
): MoveAssessment {
  return moveScorer(model, options)(move);
}

/**
 * {@link assessMove} for many moves on one model: the options are checked (and completed with
 * {@link CONTENTION_DEFAULTS}) once, here; the returned function checks each move. Meant for
 * the moves of one round: it checks a node object once, the first time a move names it (the
 * moves of a round share their nodes; a node is not to be changed in place between moves),
 * and remembers a few of each node's predictions.
 */
export function moveScorer(
  model: FittedModel,
  options: Partial<ContentionOptions> = {},
): (move: MoveInput) => MoveAssessment {
  const o = contentionOptions(options);
  const predict = rememberingPredict(model);
  // a round's moves share their nodes: each node object is checked once
  const checked = new WeakMap<object, NodeContention>();
  const node = (value: unknown, field: string) => {
    let n = typeof value === 'object' && value !== null ? checked.get(value) : undefined;
    if (!n) {
      n = checkNode(value, field, true);
      checked.set(value as object, n);
    }
    return n;
  };
  // the source's side of its guest's last move: the same for each of the guest's targets
  let lastSource: { n: NodeContention; cpu: number; mem: number; change: NodePressureChange } | undefined;
  return (move) => {
    if (typeof move !== 'object' || move === null) throw bad('move', 'an object', move);
    const source = node(move.source, 'move.source');
    const target = node(move.target, 'move.target');
    if (source.node === target.node) throw bad('move.target.node', 'another node than the source', target.node);
    const b = move.bundle as unknown as Record<string, unknown>;
    if (typeof b !== 'object' || b === null) throw bad('move.bundle', 'an object', b);
    // checked field by field (the names are constants: a round checks ~1,000 bundles)
    const moved: MovedLoad = { cpu: finite(b.cpu, 'move.bundle.cpu'), mem: finite(b.mem, 'move.bundle.mem') };
    const activity = finite(b.activity, 'move.bundle.activity');
    const guests = b.guests;
    if (typeof guests !== 'number' || !Number.isInteger(guests) || guests < 1 || guests > 2 ** 31)
      throw bad('move.bundle.guests', 'an integer in 1..2^31', guests);
    const transferBytes = finite(b.transferBytes, 'move.bundle.transferBytes');

    const sourceCpu = Math.max(0, source.cpu - moved.cpu);
    const sourceMem = Math.max(0, source.mem - moved.mem);
    if (lastSource?.n !== source || lastSource.cpu !== sourceCpu || lastSource.mem !== sourceMem)
      lastSource = {
        n: source,
        cpu: sourceCpu,
        mem: sourceMem,
        change: nodeChange(predict, source, sourceCpu, sourceMem),
      };
    const s = lastSource.change;
    const t = nodeChange(predict, target, target.cpu + moved.cpu, target.mem + moved.mem);
    const pressure = { source: s, target: t };
    const rateBefore =
      contentionRate(source.activity, s.cpu.before.percent, s.mem.before.percent) +
      contentionRate(target.activity, t.cpu.before.percent, t.mem.before.percent);
    const rateAfter =
      contentionRate(Math.max(0, source.activity - activity), s.cpu.after.percent, s.mem.after.percent) +
      contentionRate(target.activity + activity, t.cpu.after.percent, t.mem.after.percent);
    // the source keeping its pressure now: only the moving guests' own waiting changes there
    const rateAfterEscape =
      contentionRate(Math.max(0, source.activity - activity), s.cpu.before.percent, s.mem.before.percent) +
      contentionRate(target.activity + activity, t.cpu.after.percent, t.mem.after.percent);
    const horizon = move.horizonSeconds === undefined ? o.horizonSeconds : checkHorizon(move.horizonSeconds);
    let migrationSeconds: number;
    let costSeconds: number;
    let transferSeconds = 0;
    let estimate: MigrationEstimate | null = null;
    if (o.migration === null) {
      migrationSeconds = o.setupSeconds + transferBytes / o.bandwidthBytesPerSecond;
      costSeconds = guests * (migrationSeconds * o.stallShare + o.downtimeSeconds);
    } else {
      const vcpus = b.vcpus === undefined ? impliedVcpus(moved.cpu, activity) : checkVcpus(b.vcpus);
      estimate = estimateMigration(o.migration, { memBytes: transferBytes, cpuCores: moved.cpu, vcpus });
      migrationSeconds = estimate.durationSeconds;
      // the transfer's cores on both ends while it runs: the guests there wait that much more
      const k = estimate.transferCpuCores;
      const extra = (n: NodeContention, p: NodePressureChange) =>
        Math.max(
          0,
          contentionRate(
            n.activity,
            predict(n.node, 'cpu', loadOf(n.cpu + k, n.maxcpu, n.node)).percent,
            p.mem.before.percent,
          ) - contentionRate(n.activity, p.cpu.before.percent, p.mem.before.percent),
        );
      transferSeconds =
        k > 0 ? (extra(source, pressure.source) + extra(target, pressure.target)) * migrationSeconds : 0;
      // the moving guests' own cost: one pause each, the slowdown and throttle of the bundle
      costSeconds = estimate.guestSeconds + (guests - 1) * estimate.downtimeSeconds + transferSeconds;
    }
    // a migration that fails moves nothing: no saving, its cost all the same
    const counted = estimate && !estimate.converged ? 0 : Math.max(0, horizon - migrationSeconds);
    const savedSeconds = (rateBefore - rateAfter) * counted;
    const escapeSeconds = (rateBefore - rateAfterEscape) * counted;
    const escapeConfidence = Math.min(
      s.cpu.before.confidence,
      s.mem.before.confidence,
      t.cpu.before.confidence,
      t.cpu.after.confidence,
      t.mem.before.confidence,
      t.mem.after.confidence,
    );
    let confidence = 1;
    confidence = lower(confidence, s.cpu.before);
    confidence = lower(confidence, s.cpu.after);
    confidence = lower(confidence, s.mem.before);
    confidence = lower(confidence, s.mem.after);
    confidence = lower(confidence, t.cpu.before);
    confidence = lower(confidence, t.cpu.after);
    confidence = lower(confidence, t.mem.before);
    confidence = lower(confidence, t.mem.after);
    const usage =
      s.cpu.before.basis === 'usage' ||
      s.cpu.after.basis === 'usage' ||
      s.mem.before.basis === 'usage' ||
      s.mem.after.basis === 'usage' ||
      t.cpu.before.basis === 'usage' ||
      t.cpu.after.basis === 'usage' ||
      t.mem.before.basis === 'usage' ||
      t.mem.after.basis === 'usage';
    const relief = savedSeconds - escapeSeconds;
    return {
      source: s,
      target: t,
      rateBefore,
      rateAfter,
      relative: rateBefore > 0 ? (rateBefore - rateAfter) / rateBefore : 0,
      movingRate: contentionRate(Math.min(activity, source.activity), s.cpu.before.percent, s.mem.before.percent),
      movedCpu: moved.cpu,
      migrationSeconds,
      savedSeconds,
      costSeconds,
      transferSeconds,
      migration: estimate,
      horizonSeconds: horizon,
      confidence,
      escapeSeconds,
      escapeConfidence,
      netSeconds: discounted(escapeSeconds, escapeConfidence) + discounted(relief, confidence) - costSeconds,
      basis: usage ? 'usage' : 'learned',
    };
  };
}
