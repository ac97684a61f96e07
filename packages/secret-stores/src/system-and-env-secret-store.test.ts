import { generateKeyPairSync } from 'node:crypto';
import { ErrorCode } from '@portico/gateway-core';
import { problemsOf, setSystemProperty } from '@portico/gateway-core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { variableName } from './system-and-env-secret-store.ts';
import { failure, said, storeOf } from './test-helpers.ts';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const MARKER = 'marker-Zq7-value';
const set: string[] = [];

function env(name: string, value: string) {
  process.env[name] = value;
  set.push(name);
}
function property(name: string, value: string) {
  setSystemProperty(name, value);
  set.push(`-D${name}`);
}
afterEach(() => {
  for (const name of set.splice(0)) {
    if (name.startsWith('-D')) setSystemProperty(name.slice(2), null);
    else delete process.env[name];
  }
});

const store = (config: unknown = {}) => storeOf({ type: 'SystemAndEnvSecretStore', config });

describe('SystemAndEnvSecretStore', () => {
  it('maps an ID to a variable in capitals, other characters as underscores', () => {
    expect(variableName('ig.agent.password')).toBe('IG_AGENT_PASSWORD');
    expect(variableName('a.b-c/d')).toBe('A_B_C_D');
  });

  it('reads the variable of an ID, base64-decoded by default', async () => {
    env('PORTICO_SES_AGENT', b64('s3cret'));
    const { secret } = await store();
    expect(await secret('portico.ses.agent', 'password')).toBe('s3cret');
  });

  it('reads the text as it is with format PLAIN (any case)', async () => {
    env('PORTICO_SES_PLAIN', 'plain text=');
    const { secret } = await store({ format: 'plain' });
    expect(await secret('portico.ses.plain', 'password')).toBe('plain text=');
  });

  it('reads the system property before the variable, as the incumbents do', async () => {
    env('PORTICO_SES_BOTH', b64('from-env'));
    property('portico.ses.both', b64('from-property'));
    const { secret } = await store();
    expect(await secret('portico.ses.both', 'password')).toBe('from-property');
    // Read at each query: a property removed later leaves the variable.
    setSystemProperty('portico.ses.both', null);
    expect(await secret('portico.ses.both', 'password')).toBe('from-env');
  });

  it('takes the format of a mapping for its ID', async () => {
    env('PORTICO_SES_MAPPED', 'plain-one');
    env('PORTICO_SES_OTHER', b64('encoded'));
    const { secret } = await store({ mappings: [{ secretId: 'portico.ses.mapped', format: 'PLAIN' }] });
    expect(await secret('portico.ses.mapped', 'password')).toBe('plain-one');
    expect(await secret('portico.ses.other', 'password')).toBe('encoded');
  });

  it('gives a secret key of the decoded bytes', async () => {
    env('PORTICO_SES_HMAC', Buffer.from('0123456789abcdef').toString('base64'));
    const { secret } = await store();
    const key = await secret('portico.ses.hmac', 'secret-key');
    expect(key.export().toString()).toBe('0123456789abcdef');
  });

  it('gives the keys of a PEM text, as it is or base64-encoded', async () => {
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = pair.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    const publicPem = pair.publicKey.export({ format: 'pem', type: 'spki' }) as string;
    env('PORTICO_SES_PEM', pem);
    env('PORTICO_SES_PEM64', b64(publicPem));
    const { secret } = await store();
    expect((await secret('portico.ses.pem', 'private-key')).equals(pair.privateKey)).toBe(true);
    expect((await secret('portico.ses.pem', 'public-key')).equals(pair.publicKey)).toBe(true);
    expect((await secret('portico.ses.pem64', 'public-key')).equals(pair.publicKey)).toBe(true);
    const wrong = await failure(secret('portico.ses.pem64', 'private-key'));
    expect(wrong.message).toBe(
      "the secret 'portico.ses.pem64' of SystemAndEnvSecretStore is a public key or certificate, not a private key",
    );
  });

  it('holds no ID whose property and variable are unset', async () => {
    const { secret } = await store();
    const error = await failure(secret('portico.ses.unset', 'password'));
    expect(error.code).toBe(ErrorCode.SECRET);
    expect(error.message).toContain('stores searched: SystemAndEnvSecretStore');
  });

  it('says a value is not base64 without showing it', async () => {
    env('PORTICO_SES_BAD', `${MARKER}!`);
    const { secret } = await store();
    const error = await failure(secret('portico.ses.bad', 'password'));
    expect(error.toString()).toBe(
      "PORTICO_E_SECRET config/config.json $.heap[0].config.secretId: the secret 'portico.ses.bad' of SystemAndEnvSecretStore is not base64 (its format is BASE64) (expected base64 text, or format PLAIN)",
    );
    expect(said(error)).not.toContain(MARKER);
    for (const purpose of ['secret-key', 'private-key', 'public-key'] as const) {
      expect(said(await failure(secret('portico.ses.bad', purpose)))).not.toContain(MARKER);
    }
  });

  it('says a text that is no PEM is no key, without showing it', async () => {
    env('PORTICO_SES_NOTPEM', MARKER);
    const { secret } = await store({ format: 'PLAIN' });
    const error = await failure(secret('portico.ses.notpem', 'public-key'));
    expect(error.message).toBe(
      "the secret 'portico.ses.notpem' of SystemAndEnvSecretStore is not a PEM key or certificate, so it is no public key",
    );
    expect(said(error)).not.toContain(MARKER);
  });

  it('refuses a mapping without secretId or format, and a bad leaseExpiry, each at its path', async () => {
    const problems = problemsOf(
      await failure(store({ mappings: [{ format: 'PLAIN' }, { secretId: 'x' }], leaseExpiry: 'soon' })),
    );
    expect(problems.map((p) => `${p.code} ${p.details.jsonPath}`).sort()).toEqual([
      'PORTICO_E_CONFIG $.heap[0].config.leaseExpiry',
      'PORTICO_E_CONFIG $.heap[0].config.mappings[0].secretId',
      'PORTICO_E_CONFIG $.heap[0].config.mappings[1].format',
    ]);
  });

  it('takes another format word as the name of a format object, and refuses one that is none', async () => {
    const unknown = problemsOf(await failure(store({ format: 'HEX' })));
    expect(unknown.map((p) => `${p.code} ${p.details.jsonPath}`)).toEqual([
      'PORTICO_E_REFERENCE $.heap[0].config.format',
    ]);
    const notFormat = await failure(
      storeOf(
        { type: 'SystemAndEnvSecretStore', config: { mappings: [{ secretId: 'x', format: 'other' }] } },
        { heap: [{ name: 'other', type: 'Base64EncodedSecretStore', config: { secrets: {} } }] },
      ),
    );
    expect(problemsOf(notFormat).map((p) => `${p.code} ${p.details.jsonPath}`)).toEqual([
      'PORTICO_E_REFERENCE $.heap[1].config.mappings[0].format',
    ]);
  });

  it('accepts a leaseExpiry (nothing is kept, so it changes nothing)', async () => {
    env('PORTICO_SES_LEASE', b64('x'));
    const { secret } = await store({ leaseExpiry: '5 minutes' });
    expect(await secret('portico.ses.lease', 'password')).toBe('x');
  });
});
