export {
  contentionPlugin,
  createContentionPlugin,
  type ContentionPluginOptions,
  type ContentionSettings,
  type RebalanceObjective,
} from './settings';
