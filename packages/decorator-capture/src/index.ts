import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { CaptureDecoratorHeaplet } from './capture-decorator.ts';
import { CaptureFilterHeaplet } from './capture-filter.ts';

export {
  CAPTURE_POINTS,
  CaptureDecorator,
  CaptureDecoratorHeaplet,
  type CapturePoint,
  type CaptureSettings,
  capturePoints,
} from './capture-decorator.ts';
export { CaptureFilter, CaptureFilterHeaplet } from './capture-filter.ts';
export { BINARY_ENTITY, type CaptureMasks } from './message-text.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [CaptureDecoratorHeaplet, CaptureFilterHeaplet],
});
