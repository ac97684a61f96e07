import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { isPorticoError, type PorticoError } from '@portico/gateway-core';
import { checkConfig, createMemoryLogger, problemsOf, type Router } from '@portico/gateway-core/runtime';
import { Gateway } from '../server/gateway.ts';
import { type Instance, locateInstance } from '../server/instance.ts';
import { adminSchema, sessionSchema } from '../server/settings.ts';
import { type Output, UsageError } from './output.ts';

/** A warning as validate prints it: where it is, and what it says. */
interface Warning {
  file: string | undefined;
  jsonPath: string | undefined;
  message: string;
}

/**
 * `portico validate [--base DIR] [--strict]`: loads admin.json, config.json and every route file,
 * creating every declared object (referenced or not), without serving. Prints every problem found
 * (code, file, JSON path, what was expected) and every warning, then one line per file (`ok`, or
 * how many problems and warnings it has). Exit status 1 when there is a problem (or, with
 * `--strict`, a warning), else 0.
 */
export async function validateCommand(argv: string[], out: Output): Promise<number> {
  const { base, strict } = parse(argv);
  const logger = createMemoryLogger();
  const problems: PorticoError[] = [];
  let instance: Instance;
  try {
    instance = locateInstance({ base });
  } catch (error) {
    if (!isPorticoError(error)) throw error;
    // admin.json or config.json does not parse: nothing else can be loaded.
    return report({ problems: problemsOf(error), warnings: [], files: [], base: undefined, strict, out });
  }
  instance.environment.validating = true;
  const files = [instance.adminFile, instance.configFile].filter((file) => existsSync(file));
  const admin = adminProblems(instance);
  if (admin.length > 0) {
    problems.push(...admin);
    instance = { ...instance, admin: withoutFieldsAt(instance.admin, admin) };
  }
  let routes = 0;
  try {
    const gateway = await Gateway.load(instance, logger);
    // First, so that the routers declared but not used are created (and scanned) too.
    problems.push(...(await gateway.createAll()));
    for (const router of withNested(gateway.routers())) {
      routes += router.routes.length;
      const reordered = orderDifference(router);
      if (reordered) logger.warn(reordered.message, { file: reordered.file });
      const loaded = router.routes.flatMap((route) => route.file ?? []);
      files.push(...[...loaded, ...router.failures.map((failure) => failure.file)].sort());
      for (const failure of router.failures) problems.push(...failure.problems);
      if (router.directoryProblem) problems.push(router.directoryProblem);
    }
    await gateway.destroy();
  } catch (error) {
    if (!isPorticoError(error)) throw error;
    problems.push(...problemsOf(error));
  }
  const warnings = logger.records
    .filter((record) => record.level === 'warn')
    .map(({ message, data }) => ({
      file: typeof data?.file === 'string' ? data.file : undefined,
      jsonPath: typeof data?.jsonPath === 'string' ? data.jsonPath : undefined,
      message,
    }))
    // A warning the run-time logs about something validate counts as a problem is shown once.
    .filter((w) => !problems.some((p) => p.message === w.message && p.details.file === w.file));
  return report({ problems, warnings, files, base: instance.base, strict, out, routes });
}

/** admin.json's problems, found without logging (loading it again logs its warnings once). */
function adminProblems(instance: Instance): PorticoError[] {
  const quiet = createMemoryLogger();
  const problems = checkConfig(adminSchema, instance.admin, {
    file: instance.adminFile,
    logger: quiet,
  }).errors;
  // The server's own session settings, which `portico start` reads as it starts.
  const session = (instance.admin as { session?: unknown } | undefined)?.session;
  if (session !== undefined)
    problems.push(
      ...checkConfig(sessionSchema, session, {
        file: instance.adminFile,
        jsonPath: '$.session',
        logger: quiet,
      }).errors,
    );
  return problems;
}

/**
 * admin.json without the top-level fields its problems are in, so that the other files are still
 * loaded (with those fields' defaults) and checked.
 */
function withoutFieldsAt(admin: unknown, problems: PorticoError[]): unknown {
  if (admin === null || typeof admin !== 'object' || Array.isArray(admin)) return {};
  const faulty = new Set<string>();
  for (const problem of problems) {
    // `$.limits.maxHeaderSize` or `$["odd key"]...` (the form childPath writes).
    const match = /^\$(?:\.([A-Za-z_$][\w$]*)|\[("(?:[^"\\]|\\.)*")\])/.exec(problem.details.jsonPath ?? '');
    if (match === null) return {};
    faulty.add(match[1] ?? (JSON.parse(match[2]!) as string));
  }
  return Object.fromEntries(Object.entries(admin).filter(([key]) => !faulty.has(key)));
}

/** The routers, and those their routes nest, at any depth. */
function withNested(routers: Router[]): Router[] {
  const all: Router[] = [];
  for (const router of routers) all.push(router, ...withNested(router.nestedRouters()));
  return all;
}

function parse(argv: string[]): { base: string | undefined; strict: boolean } {
  try {
    const { values } = parseArgs({
      args: argv,
      options: { base: { type: 'string' }, strict: { type: 'boolean', default: false } },
    });
    return { base: values.base, strict: values.strict };
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/**
 * Prints the warnings and problems (standard error), one line per file (standard output: every file
 * read, and any other a problem or warning names), and the verdict; returns the exit status.
 */
function report(result: {
  problems: PorticoError[];
  warnings: Warning[];
  files: string[];
  base: string | undefined;
  strict: boolean;
  out: Output;
  routes?: number;
}): number {
  const { warnings, base, strict, out } = result;
  // A problem found twice (by its route, then by creating what is left) is printed once.
  const seen = new Set<string>();
  const problems = result.problems.filter((p) => !seen.has(p.toString()) && seen.add(p.toString()));
  for (const { file, jsonPath, message } of warnings) {
    const where = [file, jsonPath].filter((part) => part !== undefined).join(' ');
    out.stderr(`warning${where ? ` ${where}` : ''}: ${message}`);
  }
  for (const problem of problems) out.stderr(problem.toString());
  const named = [...problems.map((p) => p.details.file), ...warnings.map((w) => w.file)];
  const files = [...new Set([...result.files, ...named.filter((file) => file !== undefined)])];
  for (const file of files) {
    const counts = [
      count(problems.filter((p) => p.details.file === file).length, 'problem'),
      count(warnings.filter((w) => w.file === file).length, 'warning'),
    ].filter((text) => text !== undefined);
    out.stdout(`${display(file, base)}: ${counts.join(', ') || 'ok'}`);
  }
  if (problems.length > 0) {
    out.stderr(`${count(problems.length, 'problem')} found`);
    return 1;
  }
  if (strict && warnings.length > 0) {
    out.stderr(`${count(warnings.length, 'warning')} found (--strict)`);
    return 1;
  }
  const routes = result.routes ?? 0;
  out.stdout(`${base}: configuration valid (${count(routes, 'route') ?? '0 routes'})`);
  return 0;
}

/** `2 problems`, `1 warning`; undefined for none. */
function count(n: number, noun: string): string | undefined {
  return n === 0 ? undefined : `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** A file as the summary names it: relative to the instance directory when inside it. */
function display(file: string, base: string | undefined): string {
  if (base === undefined) return file;
  const relative = path.relative(base, file);
  return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative;
}

/**
 * Where routes are tried in another order than OpenIG 6.0.1 tried them: it sorted by file name,
 * Portico (as the newer incumbent documents) by route name. One warning per router, naming the first
 * pair that swapped, for configurations moving over from OpenIG 6.
 */
function orderDifference(router: Router): { message: string; file: string | undefined } | undefined {
  const byName = router.routes;
  const byFile = [...byName].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const index = byName.findIndex((route, i) => route !== byFile[i]);
  if (index < 0) return undefined;
  const first = byName[index]!;
  const second = byFile[index]!;
  return {
    file: first.file,
    message:
      `route '${first.name}' (${first.id}.json) is tried before '${second.name}' (${second.id}.json): routes are ` +
      'ordered by name; OpenIG 6.0.1 ordered them by file name, and tried them the other way round',
  };
}
