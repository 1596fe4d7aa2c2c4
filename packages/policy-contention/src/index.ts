export { type ContentionPace } from './pace';
export {
  contentionPlugin,
  createContentionPlugin,
  type ContentionPluginOptions,
  type ContentionSettings,
  type RebalanceObjective,
} from './settings';
