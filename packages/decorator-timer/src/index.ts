import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { TimerDecoratorHeaplet } from './timer-decorator.ts';

export { TimerDecorator, TimerDecoratorHeaplet, type TimeUnit, timeUnitOf } from './timer-decorator.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [TimerDecoratorHeaplet],
});
