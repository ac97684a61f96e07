import { Request, Response } from '@portico/gateway-core';
import { pluginHeap, recordingHandler, testContext } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin, { type CryptoHeaderFilter } from './index.ts';

/** AES-128 key 00 01 02 ... 0f; the ciphertexts below come from `openssl enc`, not from this code. */
const AES_KEY = 'AAECAwQFBgcICQoLDA0ODw==';
const ALICE_AES_ECB = 'Knc7X8JQaXoitUOiSNRWTJVPZPLk6G6e7oLSAhZoSJk=';
const PASSWORD_AES_ECB = 'wgyRPBoZm+SwYtwQURkJaQ==';
/** DES key 01 23 45 67 89 ab cd ef; `secret12` under DES/ECB/NoPadding. */
const DES_KEY = 'ASNFZ4mrze8=';
const SECRET12_DES_ECB = 'TLjIauD+EcU=';

function heapWith(config: unknown) {
  return pluginHeap({
    plugins: [plugin],
    file: 'routes/crypto.json',
    heap: [{ name: 'Crypto', type: 'CryptoHeaderFilter', config }],
  });
}

function filterFrom(config: unknown): Promise<CryptoHeaderFilter> {
  return heapWith(config).heap.get<CryptoHeaderFilter>('Crypto', 'filter');
}

const encryptRequest = (extra: Record<string, unknown> = {}) => ({
  messageType: 'REQUEST',
  operation: 'ENCRYPT',
  key: AES_KEY,
  headers: ['X-Secret'],
  ...extra,
});
const decryptRequest = (extra: Record<string, unknown> = {}) => ({
  ...encryptRequest(extra),
  operation: 'DECRYPT',
  ...extra,
});

/** Runs the filter on a request carrying `headers`; returns what the next handler received. */
async function requestThrough(filter: CryptoHeaderFilter, headers: Record<string, string | string[]>) {
  const next = recordingHandler();
  await filter.filter(testContext(), new Request({ uri: 'http://app/', headers }), next.handler);
  return next.requests[0]!.headers;
}

describe('CryptoHeaderFilter', () => {
  describe('operation', () => {
    it('ENCRYPT replaces the value with its Base64 ciphertext (AES/ECB/PKCS5Padding by default)', async () => {
      const headers = await requestThrough(await filterFrom(encryptRequest()), {
        'X-Secret': 'alice:wonderland',
      });
      expect(headers.getAll('x-secret')).toEqual([ALICE_AES_ECB]);
    });

    it('DECRYPT replaces the Base64 ciphertext with the plaintext', async () => {
      const headers = await requestThrough(await filterFrom(decryptRequest()), {
        'X-Secret': PASSWORD_AES_ECB,
      });
      expect(headers.getAll('x-secret')).toEqual(['password']);
    });

    it('processes every value of the header, and only the listed headers', async () => {
      const headers = await requestThrough(await filterFrom(decryptRequest()), {
        'x-secret': [PASSWORD_AES_ECB, ALICE_AES_ECB],
        'X-Other': PASSWORD_AES_ECB,
      });
      expect(headers.getAll('X-Secret')).toEqual(['password', 'alice:wonderland']);
      expect(headers.getAll('X-Other')).toEqual([PASSWORD_AES_ECB]);
    });

    it('is required and must be ENCRYPT or DECRYPT', async () => {
      const { operation: _, ...without } = encryptRequest();
      await expect(filterFrom(without)).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { file: 'routes/crypto.json', jsonPath: '$.heap[0].config.operation' },
      });
      await expect(filterFrom(encryptRequest({ operation: 'HASH' }))).rejects.toMatchObject({
        details: { jsonPath: '$.heap[0].config.operation' },
      });
    });
  });

  describe('messageType', () => {
    it('RESPONSE processes the response headers after the next handler, not the request', async () => {
      const filter = await filterFrom(decryptRequest({ messageType: 'response' }));
      const next = recordingHandler(() => new Response({ headers: { 'X-Secret': PASSWORD_AES_ECB } }));
      const request = new Request({ uri: 'http://app/', headers: { 'X-Secret': PASSWORD_AES_ECB } });
      const response = await filter.filter(testContext(), request, next.handler);
      expect(response.headers.getAll('x-secret')).toEqual(['password']);
      expect(next.requests[0]!.headers.getAll('x-secret')).toEqual([PASSWORD_AES_ECB]);
    });

    it('REQUEST leaves the response alone', async () => {
      const filter = await filterFrom(encryptRequest());
      const next = recordingHandler(() => new Response({ headers: { 'X-Secret': 'plain' } }));
      const response = await filter.filter(testContext(), new Request({ uri: 'http://app/' }), next.handler);
      expect(response.headers.getAll('x-secret')).toEqual(['plain']);
    });

    it('is required and must be REQUEST or RESPONSE', async () => {
      const { messageType: _, ...without } = encryptRequest();
      await expect(filterFrom(without)).rejects.toMatchObject({
        details: { jsonPath: '$.heap[0].config.messageType' },
      });
      await expect(filterFrom(encryptRequest({ messageType: 'BOTH' }))).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
      });
    });
  });

  describe('a value that cannot be decrypted', () => {
    it.each([
      ['not Base64', 'p@ssw0rd!'],
      ['the wrong key or padding', Buffer.from('0123456789abcdef').toString('base64')],
      ['truncated', PASSWORD_AES_ECB.slice(0, 8)],
    ])('is removed and logged when %s, the other values kept', async (_why, bad) => {
      const { heap, logger } = heapWith(decryptRequest());
      const filter = await heap.get<CryptoHeaderFilter>('Crypto', 'filter');
      const headers = await requestThrough(filter, { 'X-Secret': [bad, PASSWORD_AES_ECB] });
      expect(headers.getAll('x-secret')).toEqual(['password']);
      const warning = logger.records.find(
        (r) => r.level === 'warn' && r.message.includes('decryption failed'),
      );
      expect(warning?.data).toMatchObject({ header: 'X-Secret', algorithm: 'AES/ECB/PKCS5Padding' });
      expect(JSON.stringify(warning)).not.toContain(bad);
    });

    it('removes the header altogether when no value survives', async () => {
      const headers = await requestThrough(await filterFrom(decryptRequest()), { 'X-Secret': 'garbage!' });
      expect(headers.has('x-secret')).toBe(false);
    });
  });

  describe('key', () => {
    it('is required', async () => {
      const { key: _, ...without } = encryptRequest();
      await expect(filterFrom(without)).rejects.toMatchObject({
        details: { jsonPath: '$.heap[0].config.key' },
      });
    });

    it.each([
      ['not Base64', 'not*base64'],
      ['empty', ''],
    ])('is refused when %s', async (_why, key) => {
      await expect(filterFrom(encryptRequest({ key }))).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.key' },
      });
    });

    it('may come from a configuration-time expression', async () => {
      const { heap } = pluginHeap({
        plugins: [plugin],
        properties: { cryptoKey: AES_KEY },
        heap: [
          { name: 'Crypto', type: 'CryptoHeaderFilter', config: decryptRequest({ key: '${cryptoKey}' }) },
        ],
      });
      const filter = await heap.get<CryptoHeaderFilter>('Crypto', 'filter');
      expect((await requestThrough(filter, { 'X-Secret': PASSWORD_AES_ECB })).get('x-secret')).toBe(
        'password',
      );
    });

    it('of the wrong length loads with a warning, and every value is then removed', async () => {
      const { heap, logger } = heapWith(decryptRequest({ key: 'DESKEY' }));
      const filter = await heap.get<CryptoHeaderFilter>('Crypto', 'filter');
      expect(
        logger.records.some((r) => r.level === 'warn' && r.data?.jsonPath === '$.heap[0].config.key'),
      ).toBe(true);
      expect((await requestThrough(filter, { 'X-Secret': PASSWORD_AES_ECB })).has('x-secret')).toBe(false);
    });
  });

  describe('algorithm and keyType', () => {
    it('maps DES/ECB/NoPadding (keyType DES) and trims the decrypted text as the incumbent does', async () => {
      const filter = await filterFrom(
        decryptRequest({ algorithm: 'DES/ECB/NoPadding', keyType: 'DES', key: DES_KEY }),
      );
      expect((await requestThrough(filter, { 'X-Secret': SECRET12_DES_ECB })).get('x-secret')).toBe(
        'secret12',
      );
      const encrypt = await filterFrom(
        encryptRequest({ algorithm: 'DES/ECB/NoPadding', keyType: 'DES', key: DES_KEY }),
      );
      const padded = (await requestThrough(encrypt, { 'X-Secret': 'pin42   ' })).get('x-secret')!;
      expect((await requestThrough(filter, { 'X-Secret': padded })).get('x-secret')).toBe('pin42');
    });

    it.each([
      ['AES/CBC/PKCS5Padding', 'AES', AES_KEY],
      ['aes/gcm/nopadding', 'AES', AES_KEY],
      ['AES/CTR/NoPadding', 'AES', AES_KEY],
      ['AES', 'AES', Buffer.alloc(32, 7).toString('base64')],
      ['DESede/ECB/PKCS5Padding', 'DESede', Buffer.alloc(24, 3).toString('base64')],
      ['DESede/CBC/PKCS5Padding', 'TripleDES', Buffer.alloc(16, 5).toString('base64')],
      ['DES/CBC/PKCS5Padding', 'DES', DES_KEY],
    ])('%s round-trips between an encrypting and a decrypting filter', async (algorithm, keyType, key) => {
      const encrypt = await filterFrom(encryptRequest({ algorithm, keyType, key }));
      const decrypt = await filterFrom(decryptRequest({ algorithm, keyType, key }));
      const ciphertext = (await requestThrough(encrypt, { 'X-Secret': 'Grüße, world' })).get('x-secret')!;
      expect(ciphertext).toMatch(/^[A-Za-z0-9+/]+=*$/);
      expect((await requestThrough(decrypt, { 'X-Secret': ciphertext })).get('x-secret')).toBe(
        'Grüße, world',
      );
    });

    it('uses a fresh IV each time in CBC, so equal values do not give equal ciphertexts', async () => {
      const encrypt = await filterFrom(encryptRequest({ algorithm: 'AES/CBC/PKCS5Padding' }));
      const first = (await requestThrough(encrypt, { 'X-Secret': 'same' })).get('x-secret');
      const second = (await requestThrough(encrypt, { 'X-Secret': 'same' })).get('x-secret');
      expect(first).not.toBe(second);
    });

    it('removes a GCM value that was tampered with', async () => {
      const encrypt = await filterFrom(encryptRequest({ algorithm: 'AES/GCM/NoPadding' }));
      const decrypt = await filterFrom(decryptRequest({ algorithm: 'AES/GCM/NoPadding' }));
      const bytes = Buffer.from(
        (await requestThrough(encrypt, { 'X-Secret': 'transfer 10' })).get('x-secret')!,
        'base64',
      );
      bytes[14]! ^= 1;
      expect((await requestThrough(decrypt, { 'X-Secret': bytes.toString('base64') })).has('x-secret')).toBe(
        false,
      );
    });

    it('removes a decrypted value that cannot be a header (a line break from flipped CTR bits), with a warning', async () => {
      const { heap, logger } = heapWith(decryptRequest({ algorithm: 'AES/CTR/NoPadding' }));
      const decrypt = await heap.get<CryptoHeaderFilter>('Crypto', 'filter');
      const encrypt = await filterFrom(encryptRequest({ algorithm: 'AES/CTR/NoPadding' }));
      const known = 'role=user; id=42';
      const bytes = Buffer.from(
        (await requestThrough(encrypt, { 'X-Secret': known })).get('x-secret')!,
        'base64',
      );
      // CTR is malleable: whoever knows a plaintext chooses what its ciphertext decrypts to.
      const wanted = Buffer.from('role=user\r\nX-Ad: 1');
      for (let i = 0; i < known.length; i++) bytes[16 + i]! ^= known.charCodeAt(i) ^ wanted[i]!;
      const headers = await requestThrough(decrypt, {
        'X-Secret': [bytes.toString('base64'), ALICE_AES_ECB],
      });
      expect(headers.getAll('x-secret').every((v) => !/[\r\n]/.test(v))).toBe(true);
      expect(logger.records).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          data: expect.objectContaining({
            reason: 'the decrypted value holds a control character',
          }),
        }),
      );
      expect(JSON.stringify(logger.records)).not.toContain('X-Ad');
    });

    it.each(['RC4', 'Blowfish/ECB/PKCS5Padding', 'AES/OFB/NoPadding', 'AES/GCM/PKCS5Padding', 'AES/ECB'])(
      'refuses the unsupported transformation %s when loading',
      async (algorithm) => {
        await expect(filterFrom(encryptRequest({ algorithm }))).rejects.toMatchObject({
          code: 'PORTICO_E_CONFIG',
          details: { jsonPath: '$.heap[0].config.algorithm' },
        });
      },
    );

    it('refuses an unknown keyType, and one that does not fit the algorithm', async () => {
      await expect(filterFrom(encryptRequest({ keyType: 'RSA' }))).rejects.toMatchObject({
        details: { jsonPath: '$.heap[0].config.keyType' },
      });
      await expect(filterFrom(encryptRequest({ keyType: 'DES' }))).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: '$.heap[0].config.keyType' },
      });
    });

    it('defaults keyType to AES', async () => {
      await expect(
        filterFrom(encryptRequest({ algorithm: 'DES/ECB/PKCS5Padding', key: DES_KEY })),
      ).rejects.toMatchObject({
        details: { jsonPath: '$.heap[0].config.keyType' },
      });
    });
  });

  describe('headers', () => {
    it('defaults to none: nothing is touched', async () => {
      const { headers: _, ...without } = encryptRequest();
      const headers = await requestThrough(await filterFrom(without), { 'X-Secret': 'plain' });
      expect(headers.get('x-secret')).toBe('plain');
    });

    it('processes a header listed twice in different spellings once', async () => {
      const filter = await filterFrom(encryptRequest({ headers: ['X-Secret', 'x-secret'] }));
      expect((await requestThrough(filter, { 'X-Secret': 'alice:wonderland' })).get('x-secret')).toBe(
        ALICE_AES_ECB,
      );
    });

    it('must be an array of strings', async () => {
      await expect(filterFrom(encryptRequest({ headers: 'X-Secret' }))).rejects.toMatchObject({
        details: { jsonPath: '$.heap[0].config.headers' },
      });
    });
  });

  describe('charset', () => {
    it('decodes the decrypted bytes (UTF-8 by default)', async () => {
      const encrypt = await filterFrom(encryptRequest({ charset: 'ISO-8859-1' }));
      const latin = await filterFrom(decryptRequest({ charset: 'ISO-8859-1' }));
      const utf8 = await filterFrom(decryptRequest());
      const ciphertext = (await requestThrough(encrypt, { 'X-Secret': 'café' })).get('x-secret')!;
      expect((await requestThrough(latin, { 'X-Secret': ciphertext })).get('x-secret')).toBe('café');
      expect((await requestThrough(utf8, { 'X-Secret': ciphertext })).get('x-secret')).not.toBe('café');
    });

    it('refuses an unknown character set, and for ENCRYPT one Node cannot write', async () => {
      await expect(filterFrom(decryptRequest({ charset: 'UTF-9' }))).rejects.toMatchObject({
        details: { jsonPath: '$.heap[0].config.charset' },
      });
      await expect(filterFrom(decryptRequest({ charset: 'windows-1252' }))).resolves.toBeDefined();
      await expect(filterFrom(encryptRequest({ charset: 'windows-1252' }))).rejects.toMatchObject({
        details: { jsonPath: '$.heap[0].config.charset' },
      });
    });

    it("accepts and ignores the incumbent samples' charSet", async () => {
      await expect(filterFrom(encryptRequest({ charSet: 'utf-8' }))).resolves.toBeDefined();
    });
  });
});
