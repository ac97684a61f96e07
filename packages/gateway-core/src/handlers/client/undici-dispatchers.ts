import { createRequire } from 'node:module';
import type {
  Client as ClientClass,
  Dispatcher as DispatcherClass,
  EnvHttpProxyAgent as EnvAgentClass,
  errors,
  Pool as PoolClass,
  ProxyAgent as ProxyAgentClass,
} from 'undici';

/**
 * The undici dispatchers the upstream client uses, loaded from their own modules rather than
 * from undici's index. The index loads all of undici (fetch, WebSocket, caches, mocks ...), about
 * twice the resident memory of the dispatchers alone in every process (bench/README.md, "Memory at
 * start"). undici has no `exports` map,
 * so these paths are its published files; its version is pinned in package.json, and every upstream
 * test goes through these classes, so an upgrade that moves them fails the tests at once.
 */
const load = createRequire(import.meta.url);

// As undici's index does: the request/stream/pipeline/connect/upgrade methods live on the Dispatcher
// prototype, and ProxyAgent tunnels through `connect`.
export const Dispatcher: typeof DispatcherClass = load('undici/lib/dispatcher/dispatcher.js');
Object.assign(Dispatcher.prototype, load('undici/lib/api/index.js'));

export const Pool: typeof PoolClass = load('undici/lib/dispatcher/pool.js');
export const Client: typeof ClientClass = load('undici/lib/dispatcher/client.js');
export const ProxyAgent: typeof ProxyAgentClass = load('undici/lib/dispatcher/proxy-agent.js');
export const EnvHttpProxyAgent: typeof EnvAgentClass = load('undici/lib/dispatcher/env-http-proxy-agent.js');

// The upstream client's own idle timeouts fail exchanges with undici's errors, as undici's would.
const undiciErrors: typeof errors = load('undici/lib/core/errors.js');
export const { BodyTimeoutError, ClientClosedError, HeadersTimeoutError } = undiciErrors;
