export { PlanError, type PlanErrorCode } from './errors';
export { DEFAULT_WEIGHTS, MAX_SIZE, type CheckedGuest, type CheckedNode } from './validate';
export { planPlacement } from './planner';
export { planDrain } from './drain';
export { placeGuests, type NewGuest, type PlaceOptions, type PlacementRequest, type PlacementResult } from './place';
export { nodeFailureReport, type NodeFailureCase, type NodeFailureReport } from './what-if';
export { rulesFromCompiled, rulesFromConfig } from './rules';
export { checkPlanJson } from './json';
export { planInputFromSnapshot, type PlanSnapshot, type SnapshotOptions } from './snapshot';
export type {
  CapacityPolicy,
  DrainSummary,
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
  RoomMove,
} from './types';
