import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MAX_JSON_NESTING, nestsDeeperThan } from '../config/json.ts';
import { ErrorCode, PorticoError } from '../errors.ts';
import type { RouteFailure, Router } from './router.ts';

/** A route id as a file name: letters, digits, `.`, `_`, `-`, not starting with a dot. */
const ROUTE_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

/** What a deployment came to. */
export type DeployOutcome =
  | { ok: true; created: boolean }
  | { ok: false; status: number; message: string; problems?: RouteFailure['problems'] };

/** One deployment or removal at a time per router: each writes, scans, and reads what the scan did. */
const queues = new WeakMap<Router, Promise<unknown>>();

function serially<T>(router: Router, work: () => Promise<T>): Promise<T> {
  const previous = queues.get(router) ?? Promise.resolve();
  const next = previous.then(work, work);
  queues.set(
    router,
    next.catch(() => undefined),
  );
  return next;
}

/** Why an id cannot name a route file, or undefined. */
export function routeIdProblem(id: string): string | undefined {
  return ROUTE_ID.test(id)
    ? undefined
    : 'a route id is 1 to 128 letters, digits, ".", "_" or "-", not starting with "."';
}

/**
 * Writes a route's JSON to `<id>.json` in the router's directory and loads it, as the incumbents' router
 * API does: the file is what a restart finds. A route that does not load leaves the router as it was:
 * its previous file is put back (or the new one removed), the previous version keeps serving, and the
 * outcome carries the problems.
 */
export function deployRoute(router: Router, id: string, json: unknown): Promise<DeployOutcome> {
  return serially(router, async () => {
    const idProblem = routeIdProblem(id);
    if (idProblem !== undefined) return { ok: false, status: 400, message: idProblem };
    if (typeof json !== 'object' || json === null || Array.isArray(json))
      return { ok: false, status: 400, message: 'a route is a JSON object' };
    // As a route file is read: too deep a value would overflow the stack of JSON.stringify below.
    if (nestsDeeperThan(json)) {
      const problem = new PorticoError(
        ErrorCode.CONFIG,
        `route '${id}' nests objects and arrays more than ${MAX_JSON_NESTING} levels deep`,
        { expected: `at most ${MAX_JSON_NESTING} levels of nesting` },
      );
      return { ok: false, status: 400, message: problem.message, problems: [problem] };
    }
    const text = `${JSON.stringify(json, null, 2)}\n`;
    if (Buffer.byteLength(text) > router.maxFileSize)
      return {
        ok: false,
        status: 413,
        message: `the route is more than the ${router.maxFileSize} bytes a route file may hold (admin.json limits.maxRouteFileSize)`,
      };
    const file = path.join(router.directory, `${id}.json`);
    const previous = await readFile(file, 'utf8').catch(() => undefined);
    await mkdir(router.directory, { recursive: true });
    await replaceFile(file, text);
    await router.scan();
    const mtimeMs = (await stat(file)).mtimeMs;
    const { serving, failure } = router.stateOf(id);
    if (failure?.mtimeMs === mtimeMs || serving?.mtimeMs !== mtimeMs) {
      if (previous === undefined) await rm(file, { force: true });
      else await replaceFile(file, previous);
      await router.scan();
      return {
        ok: false,
        status: 400,
        message: `route '${id}' did not load; ${previous === undefined ? 'nothing was deployed' : 'its previous version is kept'}`,
        problems: failure?.problems ?? [],
      };
    }
    return { ok: true, created: previous === undefined };
  });
}

/** Removes a route's file and unloads it; false when the router has no file of that id. */
export function undeployRoute(router: Router, id: string): Promise<boolean> {
  return serially(router, async () => {
    if (routeIdProblem(id) !== undefined) return false;
    const file = path.join(router.directory, `${id}.json`);
    try {
      await rm(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw new PorticoError(ErrorCode.ROUTE, `the route file ${file} could not be removed`, {
        file,
        expected: 'a route file the gateway may remove',
        cause: error,
      });
    }
    await router.scan();
    return true;
  });
}

/** Writes a file whole or not at all: a scan never reads half of it. */
async function replaceFile(file: string, text: string): Promise<void> {
  // A dot-file: the router ignores it while it is being written.
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.deploying`);
  await writeFile(temporary, text);
  await rename(temporary, file);
}
