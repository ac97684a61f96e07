import { ACCESS_AUDITOR, type AccessAuditor } from '../audit/access.ts';
import { s } from '../config/schema-builders.ts';
import { defineHeaplet } from '../heap/heaplet.ts';

/** Takes every record and keeps none: the default `AuditService`, as the incumbents' admin.json has. */
const NO_OP: AccessAuditor = Object.freeze({
  [ACCESS_AUDITOR]: true as const,
  silent: true,
  access() {},
  flush: () => Promise.resolve(),
});

/**
 * The audit service every configuration has by default, under the name `AuditService`: a route that
 * names it without declaring one is audited by nothing. An `AuditService` declared with that name
 * (from @portico/audit-service) replaces it.
 */
export const NoOpAuditServiceHeaplet = defineHeaplet({
  type: 'NoOpAuditService',
  kind: 'object',
  config: s.object({}),
  create: () => NO_OP,
});
