import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { KeyStoreHeaplet } from './keystore.ts';

export { KeystoreFormatError } from './der.ts';
export { type JceksWriteOptions, type SecretKeyEntry, writeJceks } from './jceks-writer.ts';
export {
  KEYSTORE_TYPES,
  KeyStore,
  KeyStoreErrorCode,
  KeyStoreHeaplet,
  type KeystoreEntryInfo,
  type KeystoreType,
  keystorePath,
} from './keystore.ts';
export { WrongPasswordError } from './pbe.ts';

/** The plugin manifest: the KeyStore type. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [KeyStoreHeaplet],
});
