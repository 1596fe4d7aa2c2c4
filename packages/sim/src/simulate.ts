import type { ManagerOptions } from '@poise/ha';
import type { CaseInput } from './case';
import type { RoundModel } from './round-model';
import { Simulation, type SimulationResult } from './simulation';

export type { SimulationResult } from './simulation';

/**
 * Runs one test case to its end and returns the log (a {@link Simulation} stepped to its end).
 * `options.roundModel` as {@link SimulationOptions.roundModel}, `options.registry` as
 * {@link SimulationOptions.registry}.
 */
export function simulate(
  input: CaseInput,
  options: ManagerOptions & { roundModel?: RoundModel },
  sink?: (line: string) => void,
): SimulationResult {
  return new Simulation(input, {
    profile: options.profile,
    sink,
    roundModel: options.roundModel,
    ...(options.registry ? { registry: options.registry } : {}),
  }).run();
}
