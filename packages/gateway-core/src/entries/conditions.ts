/**
 * `@portico/gateway-core/conditions`: for filters that act when a condition holds (`s.condition()`
 * reads one): evaluating it, settled, and the rules a filter applies on the request and the response.
 */
export type { Condition } from '../config/condition-schema.ts';
export { conditionReadsEntity, firstHolding, holds, holdsSettled } from '../handlers/conditions.ts';
export { MessageRules, type RuleMessage } from '../handlers/message-rules.ts';
