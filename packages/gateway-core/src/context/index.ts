export { bindingsFor, type ClientInfo, Context, type RouterInfo, type Session } from './context.ts';
