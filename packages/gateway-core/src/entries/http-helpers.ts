/**
 * `@portico/gateway-core/http-helpers`: HTTP details some plugins need — entities and their bodies,
 * statuses, charsets, cookies, forms, temporary storage, and what the context says of the client,
 * the router and an upgrade.
 */
export { charsetSetting } from '../config/charset-setting.ts';
export type { ClientInfo, RouterInfo, UpgradeContext } from '../context/context.ts';
export type { BodySource } from '../http/body-source.ts';
export {
  charsetDecoder,
  charsetEncoder,
  charsetStreamDecoder,
  type TextStreamDecoder,
} from '../http/charset.ts';
export {
  parseCookieHeaders,
  parseSetCookie,
  type RequestCookie,
  type ResponseCookie,
  splitSetCookie2,
} from '../http/cookies.ts';
export { Entity, type EntityContent } from '../http/entity.ts';
export { encodeForm, encodeQuery, type FormFields } from '../http/form.ts';
export { Status } from '../http/status.ts';
export {
  StoredBody,
  TemporaryStorage,
  type TemporaryStorageSettings,
} from '../http/temporary-storage.ts';
