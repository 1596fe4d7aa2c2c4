export { type ContentionPace } from './pace';
export {
  CONTENTION_FIELDS,
  contentionPlugin,
  createContentionPlugin,
  type ContentionPluginOptions,
  type ContentionSettings,
  type RebalanceObjective,
} from './settings';
