export { TopsisError, type TopsisErrorCode } from './errors';
export {
  type Criteria,
  type Criterion,
  defineCriteria,
  type FlatMatrix,
  rankAlternatives,
  rankScores,
  scoreAlternatives,
  scoreFlatInPlace,
} from './topsis';
