import { defineHeaplet, s } from '@portico/gateway-core';

/**
 * TemplateObject is a heap object of no particular kind: something other objects use by name (a
 * data source, a key store, a session), which they declare with `s.ref('object')`. This one holds
 * named values (`"values": { "greeting": "hello" }`). What `create` acquires (a pool, a timer, a
 * file) it releases with `onDestroy`, which runs when the heap goes (here: forgetting the values).
 */
export class TemplateObject {
  readonly #values: Map<string, string>;

  constructor(values: Record<string, string>) {
    this.#values = new Map(Object.entries(values));
  }

  /** The value named `key`, or undefined. */
  get(key: string): string | undefined {
    return this.#values.get(key);
  }

  close(): void {
    this.#values.clear();
  }
}

export const TemplateObjectHeaplet = defineHeaplet({
  type: 'TemplateObject',
  kind: 'object',
  config: s.object({ values: s.map(s.string()).default({}) }),
  create: ({ config, onDestroy }) => {
    const object = new TemplateObject(config.values);
    onDestroy(() => object.close());
    return object;
  },
});
