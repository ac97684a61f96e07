import corePackage from '../../package.json' with { type: 'json' };
import { ChainHeaplet, ChainOfFiltersHeaplet } from '../handlers/chain.ts';
import * as client from '../handlers/client/index.ts';
import { DispatchHandlerHeaplet } from '../handlers/dispatch.ts';
import { RouterHeaplet } from '../handlers/router.ts';
import { SequenceHandlerHeaplet } from '../handlers/sequence.ts';
import { StaticResponseHandlerHeaplet } from '../handlers/static-response.ts';
import { definePlugin } from '../heap/heaplet.ts';
import { ApiProtectionFilterHeaplet } from './api-protection.ts';
import { ConsoleLogSinkHeaplet, FileLogSinkHeaplet, TemporaryStorageHeaplet } from './log-sink.ts';
import { NoOpAuditServiceHeaplet } from './no-op-audit-service.ts';
import { ScheduledExecutorServiceHeaplet } from './scheduled-executor.ts';

export { apiProtectionFilter } from './api-protection.ts';

/** The types the core itself provides; the gateway registers this manifest before discovering plugins. */
export const coreManifest = definePlugin({
  name: corePackage.name,
  version: corePackage.version,
  core: `^${corePackage.version}`,
  heaplets: [
    ChainHeaplet,
    ChainOfFiltersHeaplet,
    DispatchHandlerHeaplet,
    SequenceHandlerHeaplet,
    StaticResponseHandlerHeaplet,
    RouterHeaplet,
    // The client handlers, and the objects their settings may name (ClientTlsOptions,
    // TrustAllManager, ProxyOptions), declared in a heap as well as inline.
    ...client.clientHeaplets,
    ApiProtectionFilterHeaplet,
    ConsoleLogSinkHeaplet,
    FileLogSinkHeaplet,
    TemporaryStorageHeaplet,
    NoOpAuditServiceHeaplet,
    ScheduledExecutorServiceHeaplet,
  ],
});
