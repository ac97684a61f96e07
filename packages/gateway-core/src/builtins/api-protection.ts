import { s } from '../config/schema-builders.ts';
import { plainAddress } from '../context/client-address.ts';
import { defineHeaplet } from '../heap/heaplet.ts';
import { Response } from '../http/message.ts';
import type { Filter } from '../types.ts';

const LOOPBACK = /^(?:127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1)$/;

/**
 * Guards the administrative endpoints: only the listed client addresses (by default the loopback
 * addresses) get through; anyone else gets 403. Replace it by declaring a heap object named
 * `ApiProtectionFilter`, or name another filter in admin.json's `apiProtectionFilter`.
 */
export function apiProtectionFilter(allowed: readonly string[] | undefined): Filter {
  // Both sides in one form: `::ffff:10.0.0.1` listed or seen is `10.0.0.1`.
  const list = allowed ? new Set(allowed.map(plainAddress)) : undefined;
  return {
    filter(context, request, next) {
      const address = plainAddress(context.client.remoteAddress);
      const ok = list ? list.has(address) : LOOPBACK.test(address);
      if (ok) return next.handle(context, request);
      return Promise.resolve(Response.empty(403));
    },
  };
}

export const ApiProtectionFilterHeaplet = defineHeaplet({
  type: 'ApiProtectionFilter',
  kind: 'filter',
  config: s.object({ allowedAddresses: s.array(s.string()).optional() }),
  create: ({ config }) => apiProtectionFilter(config.allowedAddresses),
});
