import type { Condition } from '../config/condition-schema.ts';
import type { Bindings } from '../expression/compiler.ts';
import { evaluateSettled } from '../expression/lazy-map.ts';

/**
 * True only when the condition evaluates to the boolean true (null and errors count as false). It
 * does not wait for lazy maps still loading (they read as empty): request processing uses
 * `holdsSettled`.
 */
export function holds(condition: Condition | undefined, bindings: Bindings): boolean {
  if (condition === undefined) return true;
  const { expression } = condition;
  return typeof expression === 'boolean' ? expression : expression.evaluate(bindings) === true;
}

/**
 * `holds`, once every lazy map the condition reads has loaded (a SqlAttributesFilter's row): a
 * boolean when nothing it read was loading, else a promise of one.
 */
export function holdsSettled(
  condition: Condition | undefined,
  bindings: Bindings,
): boolean | Promise<boolean> {
  if (condition === undefined) return true;
  const { expression } = condition;
  if (typeof expression === 'boolean') return expression;
  const value = evaluateSettled(expression, bindings);
  return value instanceof Promise ? value.then(isTrue) : value === true;
}

const isTrue = (value: unknown): boolean => value === true;

/**
 * The index of the first item whose condition holds (an item without one always holds), from
 * `from` on; -1 when none does. Synchronous while no condition waits for a lazy map, else a promise.
 * `conditionOf` should be a function made once, not per request.
 */
export function firstHolding<T>(
  items: readonly T[],
  conditionOf: (item: T) => Condition | undefined,
  bindings: Bindings,
  from = 0,
): number | Promise<number> {
  for (let i = from; i < items.length; i++) {
    const held = holdsSettled(conditionOf(items[i]!), bindings);
    if (held === true) return i;
    if (held !== false) return held.then((h) => (h ? i : firstHolding(items, conditionOf, bindings, i + 1)));
  }
  return -1;
}

/** Whether the condition reads the request's or the response's body, which must then be buffered first. */
export function conditionReadsEntity(
  condition: Condition | undefined,
  message: 'request' | 'response',
): boolean {
  const expression = condition?.expression;
  if (typeof expression !== 'object') return false;
  return message === 'request' ? expression.readsRequestBody : expression.readsResponseBody;
}
