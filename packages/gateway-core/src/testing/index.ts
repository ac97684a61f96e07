export { type PluginHeapOptions, pluginHeap, recordingHandler, testContext } from './heap.ts';
export { loadingMap } from './lazy.ts';
