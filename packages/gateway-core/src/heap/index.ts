export {
  DEFAULT_DECORATOR_NAMES,
  type Declaration,
  type Decoration,
  decoratorNameProblem,
  isCommentKey,
} from './declaration.ts';
export { objectPath, parseDecoration } from './decorations.ts';
export { type ChildHeapOptions, Heap, type HeapOptions } from './heap.ts';
export {
  type DecorationInfo,
  type Decorator,
  defineHeaplet,
  definePlugin,
  type GatewayEnvironment,
  type Heaplet,
  type HeapletContext,
  isDecorator,
  type PluginManifest,
} from './heaplet.ts';
