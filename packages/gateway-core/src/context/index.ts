export { plainAddress } from './client-address.ts';
export {
  bindingsFor,
  type ClientInfo,
  Context,
  type RouterInfo,
  type Session,
  type UpgradeContext,
} from './context.ts';
export {
  commitSession,
  isSessionProducer,
  type SessionHandle,
  type SessionProducer,
  SessionScopeHandler,
} from './session-producer.ts';
