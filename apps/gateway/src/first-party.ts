import { simpleClassName, type UnknownTypeAdvice } from '@portico/gateway-core/runtime';
import FIRST_PARTY_TYPES from './first-party-types.json' with { type: 'json' };

/**
 * Which first-party package provides each type and alias (generated from the packages' `portico`
 * blocks by `node scripts/first-party-types.mjs`; a test fails when it is stale). The published
 * server depends on no plugin: an instance adds those it uses with `portico plugin add`.
 */
const PROVIDERS: Readonly<Record<string, string>> = FIRST_PARTY_TYPES;

/** The first-party package providing a type, alias or Java class name ending in one; else undefined. */
export function firstPartyProvider(type: string): string | undefined {
  const simple = simpleClassName(type);
  return (
    (Object.hasOwn(PROVIDERS, type) ? PROVIDERS[type] : undefined) ??
    (simple !== undefined && Object.hasOwn(PROVIDERS, simple) ? PROVIDERS[simple] : undefined)
  );
}

/**
 * The server's advice for a type no discovered package provides: the first-party package that
 * provides it, and the command that adds it to the instance.
 */
export const firstPartyAdvice: UnknownTypeAdvice = (type) => {
  const provider = firstPartyProvider(type);
  return provider === undefined
    ? undefined
    : `'${type}' is provided by ${provider}: portico plugin add ${provider}`;
};
