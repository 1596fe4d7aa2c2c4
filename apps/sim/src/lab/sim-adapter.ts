/**
 * The simulator-backed `runOne` of the lab: the case is loaded (`loadCase`), the variant's `crs`
 * keys are applied as `--set` overrides (`withCrsOverrides`, every key the simulator knows),
 * the run's seed seeds the node noise (`SimulationOptions.seed`; the case's `sim_options`
 * `max-time` stays the time limit), and a `RunRecorder` records it from the Simulation API
 * (samples after every round with loads, imbalance, online state and pressure; the balancer's
 * motions with their outcomes), plus where the guests started and ended for the hindsight
 * oracle (`placement.ts`). The trace is the recorder's data, nothing read from the log.
 */
import { BUILTIN_REGISTRY, loadPluginRegistry } from '@poise/ha';
import type { PolicyRegistry } from '@poise/policy';
import { RunRecorder, SimError, Simulation, loadCase, withCrsOverrides } from '@poise/sim';
import { LabError } from './errors';
import { watchStageFailures } from '../stage-failures';
import { policyValueProblems } from '../policy-values';
import { recordPlacement, servicePlacement } from './placement';
import { scenarioDir, type RunOptions, type ScenarioRef } from './runner';
import { TRACE_FORMAT, type RunTrace } from './trace';
import type { Variant } from './variants';

/** The profile every lab run uses: the current release's semantics (issue 8's stages live there). */
export const LAB_PROFILE = 'pve-9.2';

/** A variant's `crs` keys as `--set` overrides (`key=value`), in the variant's order. */
export function variantOverrides(variant: Variant): string[] {
  return Object.entries(variant.crs).map(([key, value]) => `${key}=${String(value)}`);
}

/**
 * Runs one scenario under one variant with `seed` (`pve-9.2` profile) and returns its trace;
 * with `options.plugins`, once it has loaded them (a promise). Throws {@link LabError}
 * `bad-variants` for a key or value the simulator refuses, `bad-scenario` for a case that does
 * not load, `run-failed` when the simulation aborts or a policy stage fails (the message names
 * the plug-in, the stage and the round: see `StageError` of `@poise/policy`).
 */
export function runOne(scenario: ScenarioRef, variant: Variant, seed: number): RunTrace;
export function runOne(
  scenario: ScenarioRef,
  variant: Variant,
  seed: number,
  options: RunOptions,
): RunTrace | Promise<RunTrace>;
export function runOne(
  scenario: ScenarioRef,
  variant: Variant,
  seed: number,
  options: RunOptions = {},
): RunTrace | Promise<RunTrace> {
  const plugins = options.plugins;
  if (!plugins || plugins.modules.length === 0) return runWith(BUILTIN_REGISTRY, scenario, variant, seed);
  return loadPluginRegistry(plugins.modules, plugins.from).then((registry) =>
    runWith(registry, scenario, variant, seed),
  );
}

function runWith(plugins: PolicyRegistry, scenario: ScenarioRef, variant: Variant, seed: number): RunTrace {
  const failures = watchStageFailures(plugins);
  const registry = failures.registry;
  let input;
  try {
    input = loadCase(scenarioDir(scenario, seed), scenario.name, { registry });
  } catch (err) {
    throw new LabError('bad-scenario', `scenario '${scenario.name}': ${(err as Error).message}`, { cause: err });
  }
  try {
    input = withCrsOverrides(input, variantOverrides(variant), registry);
  } catch (err) {
    if (err instanceof SimError)
      throw new LabError('bad-variants', `variant '${variant.name}': ${err.message}`, { cause: err });
    throw err;
  }
  // the one rule for a bad policy value: refused, naming the file, the key and the value
  const bad = policyValueProblems(input.datacenterCfg.crs, `${scenarioDir(scenario, seed)}/datacenter.cfg`, registry);
  if (bad.length > 0) throw new LabError('bad-scenario', `scenario '${scenario.name}': ${bad.join('; ')}`);
  const sim = new Simulation(input, { profile: LAB_PROFILE, seed, registry });
  const recorder = new RunRecorder(sim);
  const initial = servicePlacement(sim.view());
  const result = sim.run();
  if (result.error !== undefined) {
    throw new LabError('run-failed', `the simulator stopped at ${sim.time} s: ${result.error}`);
  }
  const failed = failures.message();
  if (failed !== undefined) throw new LabError('run-failed', failed);
  recorder.detach();
  const load = input.simOptions?.pressureModel === 'load' ? input.simOptions.loadPressure : undefined;
  return {
    format: TRACE_FORMAT,
    scenario: scenario.name,
    variant: variant.name,
    seed,
    endTime: recorder.endTime,
    nodes: [...recorder.nodes],
    rounds: recorder.rounds,
    moves: recorder.resourceMoves(),
    ...(load ? { cpuFamilies: recorder.nodes.map((n) => (load.nodes[n]?.cpu ?? load.cpu).curve.family) } : {}),
    placement: recordPlacement(sim.view(), initial, input),
  };
}
