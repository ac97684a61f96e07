export { Chain, ChainHeaplet, ChainOfFiltersHeaplet } from './chain.ts';
export {
  type Condition,
  condition,
  conditionReadsEntity,
  firstHolding,
  holds,
  holdsSettled,
} from './conditions.ts';
export { type DispatchBinding, DispatchHandler, DispatchHandlerHeaplet } from './dispatch.ts';
export { MessageRules, type RuleMessage } from './message-rules.ts';
export { bufferingRequestBodyFor } from './request-body-buffer.ts';
export { loadRoute, problemsOf, Route, type RouteInfo, secretsUnsupported } from './route.ts';
export {
  DEFAULT_MAX_ROUTE_FILE_SIZE,
  type RouteFailure,
  Router,
  RouterHeaplet,
  type RouterOptions,
} from './router.ts';
export { type SequenceBinding, SequenceHandler, SequenceHandlerHeaplet } from './sequence.ts';
export {
  commitSession,
  isSessionProducer,
  type SessionHandle,
  type SessionProducer,
  SessionScopeHandler,
} from './session-producer.ts';
export { StaticResponseHandler, StaticResponseHandlerHeaplet } from './static-response.ts';
