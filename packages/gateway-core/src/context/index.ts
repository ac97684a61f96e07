export { plainAddress } from './client-address.ts';
export {
  bindingsFor,
  type ClientInfo,
  Context,
  type RouterInfo,
  type Session,
  type UpgradeContext,
} from './context.ts';
