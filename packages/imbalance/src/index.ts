export { ImbalanceAccumulator, TINY_MEAN } from './accumulator';
export { ImbalanceError, type ImbalanceErrorCode } from './errors';
export { exponentOf, scaleByPow2 } from './scale';
export { type ImbalanceMetric, imbalance, imbalanceWithReplaced, normalizedImbalance, rawCv } from './imbalance';
