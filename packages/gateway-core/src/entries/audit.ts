/**
 * `@portico/gateway-core/audit`: for an audit event handler (kind `audit-handler`: a CSV file, a
 * database, syslog ...) and for the audit service that delivers events to them. A handler package
 * needs nothing else: the contract (`AuditEventHandler`, `auditHandler`), the event, the schema of
 * its settings (`auditHandlerConfig`), the access topic's schema and the query filters it answers.
 * The service implements `AccessAuditor`, what a route's `auditService` must be, and makes each
 * route's `AccessRecord`s into access events (`accessEvent`).
 */
export {
  ACCESS_AUDITOR,
  ACCESS_EVENT_NAME,
  type AccessAuditor,
  type AccessRecord,
  accessEvent,
  isAccessAuditor,
} from '../audit/access.ts';
export { ACCESS_TOPIC_SCHEMA, DRAFT_04, topicFields } from '../audit/access-topic.ts';
export {
  AUDIT_HANDLER,
  type AuditEvent,
  type AuditEventHandler,
  type AuditHandlerDefinition,
  type AuditQuery,
  auditHandler,
  isAuditHandler,
  type JsonSchema,
  type QueryFilter,
  type QueryValue,
} from '../audit/handler.ts';
export {
  AUDIT_TOPICS,
  type AuditHandlerSettings,
  auditHandlerConfig,
  auditTopics,
  evaluable,
} from '../audit/handler-settings.ts';
export {
  MAX_QUERY_FILTER_LENGTH,
  matchesQueryFilter,
  parseQueryFilter,
  pointerValue,
} from '../audit/query-filter.ts';
export {
  type AuditAnswer,
  type AuditServiceView,
  auditServicesOf,
  freeAuditServiceId,
} from '../audit/services.ts';
