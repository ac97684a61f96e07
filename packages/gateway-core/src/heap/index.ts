export { type Declaration, type Decoration, isCommentKey } from './declaration.ts';
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
  KINDS,
  type Kind,
  PLUGIN_BRAND,
  type PluginManifest,
} from './heaplet.ts';
