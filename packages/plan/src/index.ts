export { PlanError, type PlanErrorCode } from './errors';
export { DEFAULT_WEIGHTS, MAX_SIZE, validatePlanInput, type CheckedGuest, type CheckedInput, type CheckedNode, type CheckedRule } from './validate';
export { planPlacement, type CheckedOptions } from './planner';
export type {
  CapacityPolicy,
  FeasiblePlan,
  InfeasiblePlan,
  NodeUse,
  PlacementPlan,
  PlanGuest,
  PlanInput,
  PlanNode,
  PlanObjective,
  PlanOptions,
  PlanRule,
  PlanRuleNode,
  PlannedMove,
  PlanWeights,
} from './types';
