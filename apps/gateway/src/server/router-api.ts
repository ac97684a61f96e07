import { ErrorCode, isPorticoError, type Request, Response } from '@portico/gateway-core';
import { matchesQueryFilter, parseQueryFilter } from '@portico/gateway-core/audit';
import {
  deployRoute,
  parseConfigJson,
  type Router,
  type RouteState,
  undeployRoute,
} from '@portico/gateway-core/runtime';

/**
 * The incumbents' router API, `api/system/objects/<router>/routes[/<id>]` under the admin prefix
 * (their Studio deploys through it; `_router` is the gateway's own router): GET with
 * `_queryFilter` lists the routes a router serves or failed to load, GET of an id reads one, PUT
 * deploys a route (its JSON the body; `If-None-Match: *` only creates, `If-Match: *` only replaces),
 * DELETE undeploys it. Deployments are written to the router's directory as `<id>.json`, so a
 * restart keeps them. Answers in the incumbents' REST shapes.
 */
export async function routerApi(
  routers: readonly Router[],
  segments: readonly string[],
  request: Request,
): Promise<Response> {
  const [routerName, collection, id, ...rest] = segments;
  if (collection !== 'routes' || rest.length > 0 || segments.some((s) => s === ''))
    return json(404, { code: 404, message: 'expected /api/system/objects/<router>/routes[/<id>]' });
  const router = routers.find((r) => r.name === routerName);
  if (router === undefined) return json(404, { code: 404, message: `no router named '${routerName}'` });
  const method = request.method.toUpperCase();
  if (id === undefined) {
    if (method !== 'GET') return notAllowed('GET');
    return query(router, request.queryParams._queryFilter?.[0]);
  }
  switch (method) {
    case 'GET': {
      const resource = routeResource(id, router.stateOf(id));
      return resource === undefined ? noRoute(id) : json(200, resource);
    }
    case 'PUT':
      return deploy(router, id, request);
    case 'DELETE': {
      const before = routeResource(id, router.stateOf(id));
      if (!(await undeployRoute(router, id))) return noRoute(id);
      return json(200, before ?? { _id: id });
    }
    default:
      return notAllowed('GET, PUT, DELETE');
  }
}

function query(router: Router, filterText: string | undefined): Response {
  if (filterText === undefined)
    return json(400, { code: 400, message: 'a query needs _queryFilter (true for every route)' });
  let filter: ReturnType<typeof parseQueryFilter>;
  try {
    filter = parseQueryFilter(filterText);
  } catch (error) {
    if (!isPorticoError(error)) throw error;
    return json(400, { code: 400, message: error.message });
  }
  const result = router.ids
    .map((id) => routeResource(id, router.stateOf(id)))
    .filter((resource) => resource !== undefined && matchesQueryFilter(filter, resource));
  return json(200, {
    result,
    resultCount: result.length,
    pagedResultsCookie: null,
    totalPagedResultsPolicy: 'NONE',
    totalPagedResults: -1,
    remainingPagedResults: -1,
  });
}

async function deploy(router: Router, id: string, request: Request): Promise<Response> {
  const exists = router.stateOf(id).serving !== undefined;
  if (request.headers.get('if-none-match') === '*' && exists)
    return json(412, { code: 412, message: `route '${id}' exists (If-None-Match: *)` });
  if (request.headers.get('if-match') === '*' && !exists)
    return json(412, { code: 412, message: `no route '${id}' to replace (If-Match: *)` });
  let text: string;
  try {
    text = await request.entity.text(router.maxFileSize);
  } catch (error) {
    if (isPorticoError(error, ErrorCode.ENTITY_TOO_LARGE))
      return json(413, { code: 413, message: error.message });
    return json(400, { code: 400, message: 'the body could not be read' });
  }
  let body: unknown;
  try {
    // Read as a route file is: its nesting bounded, so nothing after it overflows the stack.
    body = parseConfigJson(text);
  } catch (error) {
    if (!isPorticoError(error)) throw error;
    return json(400, {
      code: 400,
      message: `the body is not a route's JSON: ${error.message}`,
      detail: { problems: [error.toJSON()] },
    });
  }
  // The incumbents' resources carry their id; the file does not need it.
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const { _id: _, ...route } = body as Record<string, unknown>;
    body = route;
  }
  const outcome = await deployRoute(router, id, body);
  if (!outcome.ok)
    return json(outcome.status, {
      code: outcome.status,
      message: outcome.message,
      ...(outcome.problems === undefined
        ? {}
        : { detail: { problems: outcome.problems.map((p) => p.toJSON()) } }),
    });
  return json(outcome.created ? 201 : 200, routeResource(id, router.stateOf(id)));
}

/** A route as the API shows it; undefined when the router knows no such id. */
function routeResource(id: string, { serving, failure }: RouteState): Record<string, unknown> | undefined {
  if (serving === undefined && failure === undefined) return undefined;
  return {
    _id: id,
    name: serving?.name ?? id,
    condition: serving?.condition ?? null,
    ...(serving?.label === undefined ? {} : { label: serving.label }),
    file: serving?.file ?? failure?.file ?? null,
    loadedAt: serving === undefined ? null : new Date(serving.loadedAt).toISOString(),
    chain: serving?.chain ?? [],
    // A failed edit of a route still serving: the previous version is what requests meet.
    state:
      failure === undefined ? 'DEPLOYED' : serving === undefined ? 'FAILED' : 'DEPLOYED_PREVIOUS_VERSION',
    ...(failure === undefined ? {} : { problems: failure.problems.map((p) => p.toJSON()) }),
  };
}

const json = (status: number, value: unknown): Response => Response.json(status, value);
const noRoute = (id: string) => json(404, { code: 404, message: `no route '${id}'` });
function notAllowed(allow: string): Response {
  const response = json(405, { code: 405, message: `allowed: ${allow}` });
  response.headers.set('allow', allow);
  return response;
}
