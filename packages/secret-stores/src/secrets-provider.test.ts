import { ErrorCode } from '@portico/gateway-core';
import { parseConfigJson, problemsOf, resolveTokens } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import { failure, storeOf } from './test-helpers.ts';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const inline = (secrets: Record<string, string>) => ({
  type: 'Base64EncodedSecretStore',
  config: { secrets },
});

describe('SecretsProvider', () => {
  it('asks its stores in turn, named or inline; the first holding an ID answers', async () => {
    const { secret } = await storeOf(
      {
        type: 'SecretsProvider',
        config: { stores: ['named', inline({ a: b64('inline'), b: b64('inline-b') })] },
      },
      { heap: [{ name: 'named', ...inline({ a: b64('named') }) }] },
    );
    expect(await secret('a', 'password')).toBe('named');
    expect(await secret('b', 'password')).toBe('inline-b');
    expect((await failure(secret('c', 'password'))).message).toBe(
      "no secret store holds the secret 'c' (a password); stores searched: SecretsProvider",
    );
  });

  it('nests: a provider is a store', async () => {
    const { secret } = await storeOf(
      { type: 'SecretsProvider', config: { stores: ['inner'] } },
      {
        heap: [
          { name: 'inner', type: 'SecretsProvider', config: { stores: [inline({ deep: b64('yes') })] } },
        ],
      },
    );
    expect(await secret('deep', 'password')).toBe('yes');
  });

  it('requires stores, at least one, each a secret store', async () => {
    const missing = problemsOf(await failure(storeOf({ type: 'SecretsProvider', config: {} })));
    expect(missing.map((p) => p.details.jsonPath)).toEqual(['$.heap[0].config.stores']);
    const empty = problemsOf(await failure(storeOf({ type: 'SecretsProvider', config: { stores: [] } })));
    expect(empty.map((p) => `${p.details.jsonPath}: ${p.message}`)).toEqual([
      '$.heap[0].config.stores: no store is listed',
    ]);
    const wrong = await failure(
      storeOf(
        { type: 'SecretsProvider', config: { stores: ['handler'] } },
        { heap: [{ name: 'handler', type: 'StaticResponseHandler', config: { status: 200 } }] },
      ),
    );
    expect(problemsOf(wrong).map((p) => [p.code, p.details.jsonPath])).toEqual([
      [ErrorCode.REFERENCE, '$.heap[1].config.stores[0]'],
    ]);
  });

  it('takes &{...} tokens in a store setting, substituted when the file is read', async () => {
    const text = JSON.stringify({
      heap: [
        {
          name: 'store',
          type: 'SystemAndEnvSecretStore',
          config: { format: '&{portico.test.format|BASE64}' },
        },
      ],
    });
    const config = resolveTokens(parseConfigJson(text, 'config.json'), {
      file: 'config.json',
      env: { PORTICO_TEST_FORMAT: 'PLAIN' },
    }) as { heap: { config: unknown }[] };
    process.env.PORTICO_SES_TOKENED = 'as-is';
    try {
      const { secret } = await storeOf({ type: 'SystemAndEnvSecretStore', config: config.heap[0]!.config });
      expect(await secret('portico.ses.tokened', 'password')).toBe('as-is');
    } finally {
      delete process.env.PORTICO_SES_TOKENED;
    }
  });
});
