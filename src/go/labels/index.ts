// Kubernetes label selectors (apimachinery v0.21.3 semantics).
export { parseSelector } from './parser.ts';
export {
  everything,
  labelSelectorToSelector,
  nothing,
  SelectorError,
  type LabelSelector,
  type LabelSelectorRequirement,
  type Labels,
  type Selector,
} from './selector.ts';
