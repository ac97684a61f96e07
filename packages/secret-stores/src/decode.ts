import {
  createPrivateKey,
  createPublicKey,
  createSecretKey,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';
import { type SecretPurpose, secretError } from '@portico/gateway-core/secrets';

/** How a stored value is written: base64 of the secret's bytes (the incumbents' default), or the text itself. */
export type SecretFormat = 'BASE64' | 'PLAIN';

export const FORMATS = ['BASE64', 'PLAIN'] as const;

const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

/** Whether `text` is base64 (standard alphabet, whitespace allowed between groups, as files wrap it). */
export function isBase64(text: string): boolean {
  return BASE64.test(text) && text.replace(/\s/g, '').length % 4 === 0;
}

/** The secret's bytes: decoded from base64, or the text's own. Messages name the ID and the store, never the value. */
export function secretBytes(raw: string, format: SecretFormat, id: string, storeType: string): Buffer {
  if (format === 'PLAIN') return Buffer.from(raw, 'utf8');
  if (isBase64(raw)) return Buffer.from(raw.replace(/\s/g, ''), 'base64');
  throw secretError(
    `the secret '${id}' of ${storeType} is not base64 (its format is BASE64)`,
    'base64 text, or format PLAIN',
  );
}

/** A secret key of `bytes`; empty bytes make no key. */
export function secretKeyOf(bytes: Buffer, id: string, storeType: string): KeyObject {
  if (bytes.length === 0)
    throw secretError(`the secret '${id}' of ${storeType} is empty, so it is no secret key`);
  return createSecretKey(bytes);
}

export const isPem = (text: string) => text.trimStart().startsWith('-----BEGIN');

/**
 * The secret a BASE64 or PLAIN value holds, in the form `purpose` asks for: the (decoded) text for
 * a password, its bytes as a secret key, the key of a PEM text for a private or public key (a PEM
 * text is read as it is, whatever the format, PEM being base64 already).
 */
export function decodeSecret(
  raw: string,
  format: SecretFormat,
  id: string,
  purpose: SecretPurpose,
  storeType: string,
): string | KeyObject {
  const asymmetric = purpose === 'private-key' || purpose === 'public-key';
  if (asymmetric && isPem(raw)) return pemSecret(raw, id, storeType);
  const bytes = secretBytes(raw, format, id, storeType);
  if (purpose === 'password') return bytes.toString('utf8');
  if (purpose === 'secret-key') return secretKeyOf(bytes, id, storeType);
  const text = bytes.toString('utf8');
  if (!isPem(text)) {
    throw secretError(
      `the secret '${id}' of ${storeType} is not a PEM key or certificate, so it is no ${purpose === 'private-key' ? 'private' : 'public'} key`,
      'a PEM text (-----BEGIN ...)',
    );
  }
  return pemSecret(text, id, storeType);
}

/**
 * The secret of a PEM text: a private key (encrypted ones with `passphrase`), a public key, a
 * certificate's public key; and the incumbents' own labels, GENERIC SECRET (a password) and
 * `<algorithm> SECRET KEY` (a secret key).
 */
export function pemSecret(
  pem: string,
  id: string,
  storeType: string,
  passphrase?: string,
): string | KeyObject {
  const label = /-----BEGIN ([A-Z0-9 ]+)-----/.exec(pem)?.[1] ?? '';
  const body = () => Buffer.from(pem.replace(/-----[A-Z0-9 ]+-----/g, '').replace(/\s/g, ''), 'base64');
  try {
    if (label === 'GENERIC SECRET') return body().toString('utf8');
    if (label.endsWith('SECRET KEY')) return secretKeyOf(body(), id, storeType);
    // A private key answers both private-key and public-key queries (the core derives the public
    // half); a public key or a certificate only public-key, which the core checks and reports.
    if (label.includes('PRIVATE'))
      return createPrivateKey(passphrase === undefined ? pem : { key: pem, passphrase });
    return createPublicKey(pem);
  } catch {
    const encrypted = label.includes('ENCRYPTED') || pem.includes('Proc-Type: 4,ENCRYPTED');
    throw secretError(
      encrypted && passphrase === undefined
        ? `the secret '${id}' of ${storeType} is an encrypted PEM key and no decryptionSecretId is given`
        : `the secret '${id}' of ${storeType} is a PEM text (${label || 'no label'}) that holds no key Node.js can read${encrypted ? ' with the decryption secret' : ''}`,
      encrypted
        ? 'a PemPropertyFormat with the decryptionSecretId of its password'
        : 'a PEM private key, public key or certificate',
    );
  }
}

/** The key of a JSON Web Key: a secret key (`oct`), a private key (with `d`) or a public key. */
export function jwkKey(jwk: JsonWebKey): KeyObject {
  if (jwk.kty === 'oct') {
    if (typeof jwk.k !== 'string') throw new Error('an oct key without k');
    return createSecretKey(Buffer.from(jwk.k, 'base64url'));
  }
  return jwk.d === undefined
    ? createPublicKey({ key: jwk, format: 'jwk' })
    : createPrivateKey({ key: jwk, format: 'jwk' });
}
