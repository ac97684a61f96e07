import { s } from '../config/schema.ts';
import { defineHeaplet } from '../heap/heaplet.ts';
import { Response } from '../http/message.ts';
import type { Filter } from '../types.ts';

const LOOPBACK = /^(?:127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/;

/**
 * Guards the administrative endpoints: only the listed client addresses (by default the loopback
 * addresses) get through; anyone else gets 403. Replace it by declaring a heap object named
 * `ApiProtectionFilter`, or name another filter in admin.json's `apiProtectionFilter`.
 */
export function apiProtectionFilter(allowed: readonly string[] | undefined): Filter {
  const list = allowed ? new Set(allowed) : undefined;
  return {
    filter(context, request, next) {
      const address = context.client.remoteAddress;
      const ok = list
        ? list.has(address) || list.has(address.replace(/^::ffff:/, ''))
        : LOOPBACK.test(address);
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
