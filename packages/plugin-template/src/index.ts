import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { TemplateAuditHandlerHeaplet } from './template-audit-handler.ts';
import { TemplateDecoratorHeaplet } from './template-decorator.ts';
import { TemplateFilterHeaplet } from './template-filter.ts';
import { TemplateHandlerHeaplet } from './template-handler.ts';
import { TemplateObjectHeaplet } from './template-object.ts';

export { TemplateAuditHandler, TemplateAuditHandlerHeaplet } from './template-audit-handler.ts';
export { TemplateDecorator, TemplateDecoratorHeaplet } from './template-decorator.ts';
export { TemplateFilter, TemplateFilterHeaplet } from './template-filter.ts';
export { TemplateHandler, TemplateHandlerHeaplet } from './template-handler.ts';
export { TemplateObject, TemplateObjectHeaplet } from './template-object.ts';

/** The plugin manifest the gateway imports when a configuration first uses one of its types. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [
    TemplateAuditHandlerHeaplet,
    TemplateDecoratorHeaplet,
    TemplateFilterHeaplet,
    TemplateHandlerHeaplet,
    TemplateObjectHeaplet,
  ],
});
