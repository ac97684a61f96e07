import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { coreManifest } from '../builtins/index.ts';
import { DEFAULT_EXECUTOR } from '../builtins/scheduled-executor.ts';
import { Context } from '../context/context.ts';
import { Heap } from '../heap/heap.ts';
import type { GatewayEnvironment, PluginManifest } from '../heap/heaplet.ts';
import { type Request, Response } from '../http/message.ts';
import { createMemoryLogger } from '../logging.ts';
import { type Metrics, provideMetrics } from '../metrics/metrics.ts';
import { TypeRegistry } from '../registry/registry.ts';
import type { Handler } from '../types.ts';

export interface PluginHeapOptions {
  /** Plugins whose types the heap knows, besides the core's own. */
  plugins?: readonly PluginManifest[];
  /** Declarations for the heap (`$.heap` of a route file). */
  heap?: unknown;
  /** The file the declarations pretend to come from, for error messages. */
  file?: string;
  /** Configuration-time properties (`${...}` at load). */
  properties?: Record<string, unknown>;
  /** Directories; by default a fresh temporary instance directory. */
  environment?: Partial<GatewayEnvironment>;
  /** Objects used for names the heap does not declare, as the gateway's defaults (`LogSink`, `capture` ...). */
  defaults?: readonly unknown[];
  /** A `secrets` block (`{"stores": [...]}`), as a route file's. */
  secrets?: unknown;
  /** The metrics its objects count to (`metricsOf(heap)`), as a server gives a gateway; none by default. */
  metrics?: Metrics;
}

/**
 * A real heap for plugin tests: the core's types plus the given plugins, a memory logger whose
 * records tests can read, and an instance directory of its own. Objects are created by name with
 * `heap.get(name)`, exactly as the gateway creates them.
 */
export function pluginHeap(options: PluginHeapOptions = {}) {
  const logger = createMemoryLogger();
  const registry = new TypeRegistry({ logger });
  registry.register(coreManifest);
  for (const plugin of options.plugins ?? []) registry.register(plugin);
  const base = options.environment?.baseDirectory ?? mkdtempSync(path.join(os.tmpdir(), 'portico-heap-'));
  const environment: GatewayEnvironment = {
    baseDirectory: base,
    configDirectory: path.join(base, 'config'),
    scriptsDirectory: path.join(base, 'scripts'),
    temporaryDirectory: path.join(base, 'tmp'),
    ...options.environment,
  };
  const heap = new Heap({
    registry,
    logger,
    environment,
    ...(options.file === undefined ? {} : { file: options.file }),
    ...(options.properties === undefined ? {} : { properties: options.properties }),
    defaults: withDefaultExecutor(options.defaults ?? []),
  });
  if (options.metrics !== undefined) provideMetrics(heap, options.metrics);
  const errors = options.heap === undefined ? [] : heap.declare(options.heap);
  if (options.secrets !== undefined) errors.push(...heap.declareSecrets(options.secrets));
  if (errors.length > 0) throw errors[0];
  return { heap, logger, environment, registry };
}

/** The gateway's default ScheduledExecutorService, unless the test gives its own. */
function withDefaultExecutor(defaults: readonly unknown[]): readonly unknown[] {
  const named = (d: unknown) => (d as { name?: unknown } | null)?.name === DEFAULT_EXECUTOR;
  return defaults.some(named) ? defaults : [...defaults, { name: DEFAULT_EXECUTOR, type: DEFAULT_EXECUTOR }];
}

/** A handler that records the requests it gets and answers with `answer` (200 and no body by default). */
export function recordingHandler(answer: (request: Request) => Response = () => Response.empty(200)) {
  const requests: Request[] = [];
  const handler: Handler = {
    async handle(_context, request) {
      requests.push(request);
      return answer(request);
    },
  };
  return { handler, requests };
}

/** A fresh request context, as the server makes one per request. */
export function testContext(init: ConstructorParameters<typeof Context>[0] = {}): Context {
  return new Context(init);
}
