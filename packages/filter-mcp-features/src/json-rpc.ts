import type { FeaturePolicy } from './policy.ts';

/**
 * JSON-RPC 2.0 as MCP uses it: what a message is, the calls the policy judges, and the list
 * results it filters.
 */

export type JsonObject = Record<string, unknown>;

/** JSON-RPC's error codes the filter answers with. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
/** An unknown tool, prompt or resource (MCP: "Invalid params"; for resources since SEP-2164). */
export const INVALID_PARAMS = -32602;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A JSON-RPC 2.0 message: a request or notification (a method), or a response (a result or an error). */
export function isMessage(value: unknown): value is JsonObject {
  if (!isObject(value) || value.jsonrpc !== '2.0') return false;
  if (typeof value.method === 'string') return true;
  return 'id' in value && ('result' in value || 'error' in value);
}

/** A request expects an answer: it has a method and an id. A notification has no id. */
export function isRequest(message: JsonObject): boolean {
  return typeof message.method === 'string' && message.id !== undefined;
}

/** Ids compared as JSON, so that `1` and `"1"` stay two ids. */
export function idKey(id: unknown): string {
  return JSON.stringify(id) ?? 'undefined';
}

export function errorResponse(id: unknown, code: number, message: string, data?: JsonObject): JsonObject {
  const error: JsonObject = { code, message };
  if (data !== undefined) error.data = data;
  return { jsonrpc: '2.0', id: id ?? null, error };
}

/** The four list methods whose results the filter removes features from, and where each keeps them. */
export const LIST_RESULTS = {
  'tools/list': { items: 'tools', key: 'name' },
  'prompts/list': { items: 'prompts', key: 'name' },
  'resources/list': { items: 'resources', key: 'uri' },
  'resources/templates/list': { items: 'resourceTemplates', key: 'uriTemplate' },
} as const;

export type ListMethod = keyof typeof LIST_RESULTS;

export function isListMethod(method: unknown): method is ListMethod {
  return typeof method === 'string' && Object.hasOwn(LIST_RESULTS, method);
}

/** What a refused call is told: where its feature was named, and the words the MCP servers use. */
export interface Refusal {
  /** The call's method (`tools/call`). */
  method: string;
  /** The feature it named: a tool's or prompt's name, a resource's URI. */
  feature: string;
  response: JsonObject;
}

function stringParam(params: unknown, name: string): string | undefined {
  if (!isObject(params)) return undefined;
  const value = params[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The refusal of a request the policy does not allow, or undefined when it may go on. A call that
 * names no feature (a missing or non-string `name` or `uri`) goes on: the server refuses it.
 */
export function judgeRequest(message: JsonObject, policy: FeaturePolicy): Refusal | undefined {
  if (!isRequest(message)) return undefined;
  const method = message.method as string;
  const params = message.params;
  const refuse = (feature: string, text: string, data?: JsonObject): Refusal => ({
    method,
    feature,
    response: errorResponse(message.id, INVALID_PARAMS, text, data),
  });
  switch (method) {
    case 'tools/call': {
      const name = stringParam(params, 'name');
      return name === undefined || policy.tool(name) ? undefined : refuse(name, `Unknown tool: ${name}`);
    }
    case 'prompts/get': {
      const name = stringParam(params, 'name');
      return name === undefined || policy.prompt(name) ? undefined : refuse(name, `Unknown prompt: ${name}`);
    }
    case 'resources/read':
    case 'resources/subscribe': {
      const uri = stringParam(params, 'uri');
      return uri === undefined || policy.resource(uri)
        ? undefined
        : refuse(uri, `Unknown resource: ${uri}`, { uri });
    }
    case 'completion/complete': {
      const ref = isObject(params) ? params.ref : undefined;
      if (!isObject(ref)) return undefined;
      if (ref.type === 'ref/prompt') {
        const name = stringParam(ref, 'name');
        return name === undefined || policy.prompt(name)
          ? undefined
          : refuse(name, `Unknown prompt: ${name}`);
      }
      if (ref.type === 'ref/resource') {
        const uri = stringParam(ref, 'uri');
        return uri === undefined || policy.completionResource(uri)
          ? undefined
          : refuse(uri, `Unknown resource: ${uri}`, { uri });
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

function allowed(policy: FeaturePolicy, method: ListMethod, value: unknown): boolean {
  // An item that names nothing cannot be named by an allow list: it stays only where all are allowed.
  const named = typeof value === 'string' ? value : '\u0000';
  switch (method) {
    case 'tools/list':
      return policy.tool(named);
    case 'prompts/list':
      return policy.prompt(named);
    case 'resources/list':
      return policy.resource(named);
    case 'resources/templates/list':
      return policy.template(named);
  }
}

/**
 * A list result without the items the policy refuses, every other member (`nextCursor`, `_meta`)
 * kept; the same object when nothing was removed, so that an unchanged message is passed as it came.
 */
export function filterListResult(method: ListMethod, result: unknown, policy: FeaturePolicy): unknown {
  if (!isObject(result)) return result;
  const { items, key } = LIST_RESULTS[method];
  const list = result[items];
  if (!Array.isArray(list)) return result;
  const kept = list.filter((item) => allowed(policy, method, isObject(item) ? item[key] : undefined));
  return kept.length === list.length ? result : { ...result, [items]: kept };
}

/**
 * Where the method of a response is not known (a stream the server opened, or one resumed), the
 * result's shape says which list it is: the members `tools`, `prompts`, `resources` and
 * `resourceTemplates` appear at the top of a result only in the four list results.
 */
function filterByShape(result: unknown, policy: FeaturePolicy): unknown {
  if (!isObject(result)) return result;
  let out = result;
  for (const method of Object.keys(LIST_RESULTS) as ListMethod[]) {
    if (Array.isArray(out[LIST_RESULTS[method].items]))
      out = filterListResult(method, out, policy) as JsonObject;
  }
  return out;
}

/**
 * Filters one message coming from the server: a response to a list request (`lists` maps its id
 * to the method) loses the features the policy refuses; a response to another request of the
 * same POST passes as it is; a response to a request the filter did not see is judged by its
 * shape. Requests and notifications from the server pass. The same object when nothing changed.
 */
export function filterServerMessage(
  message: unknown,
  policy: FeaturePolicy,
  requests: ReadonlyMap<string, string> | undefined,
): unknown {
  if (!isObject(message) || typeof message.method === 'string' || !('result' in message)) return message;
  const method = requests?.get(idKey(message.id));
  const result =
    method === undefined
      ? filterByShape(message.result, policy)
      : isListMethod(method)
        ? filterListResult(method, message.result, policy)
        : message.result;
  return result === message.result ? message : { ...message, result };
}

/** `filterServerMessage` over a message or a batch of them. */
export function filterServerPayload(
  payload: unknown,
  policy: FeaturePolicy,
  requests: ReadonlyMap<string, string> | undefined,
): unknown {
  if (!Array.isArray(payload)) return filterServerMessage(payload, policy, requests);
  let changed = false;
  const out = payload.map((message) => {
    const filtered = filterServerMessage(message, policy, requests);
    if (filtered !== message) changed = true;
    return filtered;
  });
  return changed ? out : payload;
}
