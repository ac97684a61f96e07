/** `@portico/gateway-core/sessions`: for a plugin that keeps the session (JwtSession). */
export type { Session } from '../context/context.ts';
export type { SessionHandle, SessionProducer } from '../handlers/session-producer.ts';
