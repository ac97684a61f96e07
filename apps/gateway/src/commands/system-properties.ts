import { setSystemProperty } from '@portico/gateway-core/runtime';
import { UsageError } from './output.ts';

/**
 * Sets the system properties of `-Dname=value` options (repeatable), as `start`, `validate` and `eval`
 * accept them: what `${system['name']}` and the `&{name}` tokens of the configuration files read.
 */
export function setSystemProperties(assignments: readonly string[] | undefined): void {
  for (const property of assignments ?? []) {
    const eq = property.indexOf('=');
    if (eq <= 0) throw new UsageError(`-D expects name=value, got '${property}'`);
    setSystemProperty(property.slice(0, eq), property.slice(eq + 1));
  }
}
