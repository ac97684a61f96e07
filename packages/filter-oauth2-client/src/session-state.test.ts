import { describe, expect, it } from 'vitest';
import { SessionState, sessionKey, storedTokens } from './session-state.ts';

const ENDPOINT = 'https://gw.example/openid';
const pending = (state: string) => ({ state, nonce: `n-${state}`, verifier: `v-${state}` });
const tokens = (access: string) => ({ access_token: access, token_type: 'Bearer' });

describe('SessionState', () => {
  it('keeps one record per client endpoint, under the incumbents key', () => {
    const session: Record<string, unknown> = {};
    new SessionState(session, ENDPOINT).begin('A', pending('s1'));
    new SessionState(session, 'https://gw.example/other').begin('A', pending('s2'));
    expect(Object.keys(session)).toEqual([sessionKey(ENDPOINT), 'oauth2:https://gw.example/other']);
    expect(session[sessionKey(ENDPOINT)]).toEqual({ A: { pending: pending('s1') } });
  });

  it('gives a login in flight to the callback presenting its state, once', () => {
    const session: Record<string, unknown> = {};
    const state = new SessionState(session, ENDPOINT);
    state.begin('A', pending('s1'));
    state.begin('B', pending('s2'));
    expect(state.take('s3')).toBeUndefined();
    expect(state.take('s2')).toEqual({ registration: 'B', pending: pending('s2') });
    expect(state.take('s2')).toBeUndefined();
    expect(state.pendingRegistrations()).toEqual(['A']);
  });

  it('replaces a login in flight at the same registration', () => {
    const state = new SessionState({}, ENDPOINT);
    state.begin('A', pending('s1'));
    state.begin('A', pending('s2'));
    expect(state.take('s1')).toBeUndefined();
    expect(state.take('s2')?.registration).toBe('A');
  });

  it("keeps one registration's tokens: a completed login replaces the others'", () => {
    const session: Record<string, unknown> = {};
    const state = new SessionState(session, ENDPOINT);
    state.complete('A', tokens('a'));
    state.begin('A', pending('s1'));
    state.complete('B', tokens('b'));
    expect(state.loggedIn()).toEqual({ registration: 'B', tokens: tokens('b') });
    expect(session[sessionKey(ENDPOINT)]).toEqual({
      A: { pending: pending('s1') },
      B: { tokens: tokens('b') },
    });
  });

  it('removes its key when nothing is left, so an unused session stays empty', () => {
    const session: Record<string, unknown> = { other: 1 };
    const state = new SessionState(session, ENDPOINT);
    state.begin('A', pending('s1'));
    state.take('s1');
    expect(session).toEqual({ other: 1 });
    state.complete('A', tokens('a'));
    state.forget('A');
    expect(session).toEqual({ other: 1 });
    state.complete('A', tokens('a'));
    state.clear();
    expect(session).toEqual({ other: 1 });
  });

  it('ignores what is not its own record', () => {
    const state = new SessionState({ [sessionKey(ENDPOINT)]: 'garbage' }, ENDPOINT);
    expect(state.loggedIn()).toBeUndefined();
    expect(state.take('x')).toBeUndefined();
  });
});

describe('storedTokens', () => {
  it('keeps the tokens, the scopes as the provider writes them, and an absolute expiry; no claims', () => {
    const stored = storedTokens(
      {
        access_token: 'at',
        token_type: 'Bearer',
        id_token: 'it',
        refresh_token: 'rt',
        expires_in: 60,
        scope: ['openid', 'email'],
        id_token_claims: { sub: 'alice' },
      },
      1_000,
    );
    expect(stored).toEqual({
      access_token: 'at',
      token_type: 'Bearer',
      id_token: 'it',
      refresh_token: 'rt',
      scope: 'openid email',
      expires_at: 61_000,
    });
  });
});
