export { ImbalanceAccumulator, MAX_ACCUMULATOR_LOAD, TINY_MEAN } from './accumulator';
export { ImbalanceError, type ImbalanceErrorCode } from './errors';
export { exponentOf, scaleByPow2 } from './scale';
export {
  IMBALANCE_METRICS,
  type ImbalanceMetric,
  imbalance,
  imbalanceWithReplaced,
  normalizedImbalance,
  rawCv,
} from './imbalance';
