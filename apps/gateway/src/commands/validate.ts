import { parseArgs } from 'node:util';
import { createMemoryLogger, isPorticoError, type PorticoError, problemsOf } from '@portico/gateway-core';
import { Gateway } from '../server/gateway.ts';
import { locateInstance } from '../server/instance.ts';
import { type Output, UsageError } from './output.ts';

/**
 * `portico validate [--base DIR]`: loads admin.json, config.json and every route file, creating
 * every declared object, without serving. Prints every problem found (file, JSON path, what was
 * expected), not just the first; exit code 1 when there is any. Warnings (a key ignored as the
 * incumbents ignore it, a session key made at startup ...) are printed too, and fail only with
 * `--strict`.
 */
export async function validateCommand(argv: string[], out: Output): Promise<number> {
  let base: string | undefined;
  let strict = false;
  try {
    const { values } = parseArgs({
      args: argv,
      options: { base: { type: 'string' }, strict: { type: 'boolean', default: false } },
    });
    base = values.base;
    strict = values.strict;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const logger = createMemoryLogger();
  const problems: PorticoError[] = [];
  let routes = 0;
  let instance: ReturnType<typeof locateInstance>;
  try {
    instance = locateInstance({ base });
  } catch (error) {
    if (!isPorticoError(error)) throw error;
    out.stderr(error.toString());
    return 1;
  }
  instance.environment.validating = true;
  try {
    const gateway = await Gateway.load(instance, logger);
    for (const router of gateway.routers()) {
      routes += router.routes.length;
      for (const failure of router.failures) problems.push(...failure.problems);
    }
    problems.push(...(await gateway.createAll()));
    await gateway.destroy();
  } catch (error) {
    if (!isPorticoError(error)) throw error;
    problems.push(...problemsOf(error));
  }
  const warnings = logger.records.filter((r) => r.level === 'warn');
  for (const { message, data } of warnings) {
    const where = [data?.file, data?.jsonPath].filter((part) => typeof part === 'string').join(' ');
    out.stderr(`warning${where ? ` ${where}` : ''}: ${message}`);
  }
  if (strict && warnings.length > 0 && problems.length === 0) {
    out.stderr(`${warnings.length} warning${warnings.length === 1 ? '' : 's'} found (--strict)`);
    return 1;
  }
  if (problems.length === 0) {
    out.stdout(`${instance.base}: configuration valid (${routes} route${routes === 1 ? '' : 's'})`);
    return 0;
  }
  for (const problem of problems) out.stderr(problem.toString());
  out.stderr(`${problems.length} problem${problems.length === 1 ? '' : 's'} found`);
  return 1;
}
