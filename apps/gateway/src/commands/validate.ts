import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { isPorticoError, type Logger, type PorticoError, type Schema } from '@portico/gateway-core';
import {
  besidesTokenProblems,
  checkConfig,
  createGateway,
  createMemoryLogger,
  type Gateway as LoadedGateway,
  parseConfigJson,
  problemsOf,
  type Router,
  readInstance,
  temporaryDirectoryProblem,
} from '@portico/gateway-core/runtime';
import { GROOVY_MIGRATION_GUIDE, groovyDeclarations } from '@portico/gateway-core/scripting';
import { firstPartyAdvice } from '../first-party.ts';
import { APP_PACKAGE_JSON, Gateway } from '../server/gateway.ts';
import { type Instance, locateInstance } from '../server/instance.ts';
import {
  accessLogSchema,
  adminSchema,
  metricsSchema,
  openTelemetrySchema,
  sessionSchema,
} from '../server/settings.ts';
import { type Output, UsageError } from './output.ts';
import { setSystemProperties } from './system-properties.ts';

/** A warning as validate prints it: where it is, and what it says. */
interface Warning {
  file: string | undefined;
  jsonPath: string | undefined;
  message: string;
}

/**
 * `portico validate [--base DIR] [--strict] [-Dname=value]`: loads admin.json, config.json and every
 * route file, checking every declared object (referenced or not) without creating any: no
 * connection, timer or open file (docs/decisions/0092-validate-provisions-nothing.md). Prints every
 * problem found (code, file, JSON path, what was expected) and every warning, then one line per file
 * (`ok`, or how many problems and warnings it has). Exit status 1 when there is a problem (or, with
 * `--strict`, a warning), else 0. A file that has problems does not stop the others from being
 * checked: admin.json or config.json that cannot be read counts as absent, and when config.json's
 * objects cannot be created, the routes are still checked with a Router of the default settings.
 */
export async function validateCommand(argv: string[], out: Output): Promise<number> {
  const { base, strict, properties } = parse(argv);
  // Before the files are read: their `&{name}` tokens may come from system properties.
  setSystemProperties(properties);
  const logger = createMemoryLogger();
  const problems: PorticoError[] = [];
  let instance = readLeniently(base, problems);
  instance.environment.validating = true;
  const files = [instance.adminFile, instance.configFile].filter((file) => existsSync(file));
  const admin = adminProblems(instance);
  if (admin.length > 0) {
    problems.push(...admin);
    instance = { ...instance, admin: withoutFieldsAt(instance.admin, admin) };
  }
  let routes = 0;
  /** The routers whose routes were checked. */
  let routers: Router[] | undefined;
  try {
    const gateway = await Gateway.load(instance, logger);
    // First, so that the routers declared but not used are checked (and scanned) too.
    problems.push(...(await gateway.createAll()));
    routers = withNested(gateway.routers());
    routes += checkRoutes(routers, { problems, files, logger });
    await gateway.destroy();
  } catch (error) {
    if (!isPorticoError(error)) throw error;
    problems.push(...problemsOf(error));
  }
  // config.json (or admin.json's heap) stopped the gateway before its routers loaded their routes:
  // they are checked on their own, so that the problems of one file do not hide the others'.
  if (routers === undefined) routes += await routesAlone(instance, logger, problems, files);
  const warnings = logger.records
    .filter((record) => record.level === 'warn')
    .map(({ message, data }) => ({
      file: typeof data?.file === 'string' ? data.file : undefined,
      jsonPath: typeof data?.jsonPath === 'string' ? data.jsonPath : undefined,
      message,
    }))
    // A warning the run-time logs about something validate counts as a problem is shown once (the
    // warning may say more: what a running gateway does next).
    .filter((w) => !problems.some((p) => p.details.file === w.file && sameProblem(p.message, w.message)))
    // As is one logged by each load of the same file (the routes checked alone load admin.json again).
    .filter((w, i, all) => all.findIndex((o) => sameWarning(o, w)) === i);
  problems.push(...groovyNotReported(files, problems));
  // A setting whose token had no value is checked as written, and refused again: said once.
  const distinct = besidesTokenProblems(problems);
  return report({ problems: distinct, warnings, files, base: instance.base, strict, out, routes });
}

/**
 * The Groovy script declarations of the files read that loading did not report: those inside an
 * object of a type still to come, whose settings were not read. Every Groovy script an instance
 * declares is listed, so that its migration can be planned from one run.
 */
function groovyNotReported(files: readonly string[], problems: readonly PorticoError[]): PorticoError[] {
  const reported = new Set(
    problems
      .filter((p) => p.message.includes(GROOVY_MIGRATION_GUIDE))
      .map((p) => `${p.details.file} ${p.details.jsonPath}`),
  );
  const found: PorticoError[] = [];
  for (const file of new Set(files)) {
    let json: unknown;
    try {
      json = parseConfigJson(readFileSync(file, 'utf8'), file);
    } catch {
      continue; // Its own problem is reported already.
    }
    for (const problem of groovyDeclarations(json, file))
      if (!reported.has(`${file} ${problem.details.jsonPath}`)) found.push(problem);
  }
  return found;
}

function sameProblem(problem: string, warning: string): boolean {
  return warning === problem || warning.startsWith(`${problem}; `);
}

function sameWarning(a: Warning, b: Warning): boolean {
  return a.message === b.message && a.file === b.file && a.jsonPath === b.jsonPath;
}

/**
 * The instance, as `start` locates it. When admin.json or config.json cannot be read (it does not
 * parse), its problems are reported and it counts as absent: admin.json's defaults, or the default
 * Router on `config/routes`, so that the other files are still checked.
 */
function readLeniently(base: string | undefined, problems: PorticoError[]): Instance {
  try {
    return locateInstance({ base });
  } catch (error) {
    const file = isPorticoError(error) ? error.details.file : undefined;
    if (file === undefined) throw error;
    // `<base>/config/admin.json` or `<base>/config/config.json`, read again leniently.
    const read = readInstance(path.dirname(path.dirname(file)), { problems });
    return {
      ...read,
      quickstart: false,
      adminFile: read.adminFile ?? file,
      configFile: read.configFile ?? file,
    };
  }
}

/** Collects the routes, failures and problems of these routers; returns how many routes loaded. */
function checkRoutes(
  routers: Router[],
  { problems, files, logger }: { problems: PorticoError[]; files: string[]; logger: Logger },
  alone = false,
): number {
  let routes = 0;
  for (const router of routers) {
    routes += router.routes.length;
    const reordered = orderDifference(router);
    if (reordered) logger.warn(reordered.message, { file: reordered.file });
    const loaded = router.routes.flatMap((route) => route.file ?? []);
    files.push(...[...loaded, ...router.failures.map((failure) => failure.file)].sort());
    for (const failure of router.failures) problems.push(...failure.problems);
    // Checked alone, the directory is a guess: its absence is no problem of the configuration.
    if (router.directoryProblem && !alone) problems.push(router.directoryProblem);
  }
  return routes;
}

/**
 * The routes of the Router config.json's handler is (or of the default one when there is no
 * config.json), loaded with the Router's default settings but its `directory`, when the gateway
 * could not be loaded. Nothing when config.json's handler is not a Router.
 */
async function routesAlone(
  instance: Instance,
  logger: Logger,
  problems: PorticoError[],
  files: string[],
): Promise<number> {
  const router = writtenRouter(instance.config);
  if (router === undefined) return 0;
  const admin = instance.admin as Record<string, unknown> | undefined;
  let gateway: LoadedGateway | undefined;
  try {
    gateway = await createGateway({
      // What of admin.json the routes depend on (their properties, plugins and limits); its heap and
      // server settings were checked already.
      instance: {
        ...instance,
        admin: pick(admin, ['properties', 'pluginDirectories', 'limits']),
        config: { handler: { type: 'Router', config: router } },
      },
      logger,
      appPackageJson: APP_PACKAGE_JSON,
      unknownTypeAdvice: firstPartyAdvice,
    });
    return checkRoutes(withNested(gateway.routers()), { problems, files, logger }, true);
  } catch (error) {
    if (!isPorticoError(error)) throw error;
    // Already reported, by the full load.
    return 0;
  } finally {
    await gateway?.destroy();
  }
}

/**
 * The settings to check the routes with when config.json's objects cannot be created: `{}` (the
 * defaults) without config.json, else the `directory` of its handler when that is a Router (inline,
 * or declared in its heap); undefined when it is not a Router.
 */
function writtenRouter(config: unknown): Record<string, unknown> | undefined {
  if (config === undefined) return {};
  if (!isRecord(config)) return undefined;
  let handler = config.handler ?? config.handlerObject;
  if (typeof handler === 'string') {
    const heap = isRecord(config.heap) ? config.heap.objects : config.heap;
    handler = Array.isArray(heap) ? heap.find((d) => isRecord(d) && d.name === handler) : undefined;
  }
  if (!isRecord(handler) || typeof handler.type !== 'string' || !/Router(Handler)?$/.test(handler.type))
    return undefined;
  const directory = isRecord(handler.config) ? handler.config.directory : undefined;
  return typeof directory === 'string' ? { directory } : {};
}

function pick(record: Record<string, unknown> | undefined, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.flatMap((key) => (record?.[key] === undefined ? [] : [[key, record[key]]])));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** admin.json's problems, found without logging (loading it again logs its warnings once). */
function adminProblems(instance: Instance): PorticoError[] {
  const quiet = createMemoryLogger();
  const problems = checkConfig(adminSchema, instance.admin, {
    file: instance.adminFile,
    logger: quiet,
  }).errors;
  // A temporary directory that cannot be used (under /proc, not writable): start refuses it.
  const temporary = temporaryDirectoryProblem(instance);
  if (temporary !== undefined) problems.push(temporary);
  // The server's own settings, which `portico start` reads as it starts: the session, metrics, the
  // access log and traces.
  const admin = instance.admin as
    | { session?: unknown; metrics?: unknown; accessLog?: unknown; openTelemetry?: unknown }
    | undefined;
  for (const [field, schema] of [
    ['session', sessionSchema],
    ['metrics', metricsSchema],
    ['accessLog', accessLogSchema],
    ['openTelemetry', openTelemetrySchema],
  ] as const) {
    if (admin?.[field] === undefined) continue;
    const checked = checkConfig(schema as Schema<unknown>, admin[field], {
      file: instance.adminFile,
      jsonPath: `$.${field}`,
      logger: quiet,
    });
    problems.push(...checked.errors);
  }
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

function parse(argv: string[]): {
  base: string | undefined;
  strict: boolean;
  properties: string[] | undefined;
} {
  try {
    const { values } = parseArgs({
      args: argv,
      options: {
        base: { type: 'string' },
        strict: { type: 'boolean', default: false },
        // As `portico start` takes them, so that a configuration is validated as it will run.
        D: { type: 'string', short: 'D', multiple: true },
      },
    });
    return { base: values.base, strict: values.strict, properties: values.D };
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
