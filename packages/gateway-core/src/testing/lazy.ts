import { LazyMap } from '../expression/lazy-map.ts';

/**
 * A LazyMap whose contents arrive asynchronously, after `delayMs`, as a database lookup's would: for
 * testing that a component waits for lazy maps instead of reading them as empty. `loads` counts how
 * often the loader ran (at most once).
 */
export function loadingMap(contents: Record<string, unknown>, delayMs = 5) {
  const counter = { loads: 0 };
  const map = new LazyMap(async () => {
    counter.loads++;
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    return contents;
  });
  return {
    map,
    get loads() {
      return counter.loads;
    },
  };
}
