export { charsetDecoder, charsetEncoder, charsetStreamDecoder, type TextStreamDecoder } from './charset.ts';
export {
  parseCookieHeaders,
  parseSetCookie,
  type RequestCookie,
  type ResponseCookie,
  splitSetCookie2,
} from './cookies.ts';
export {
  DEFAULT_MAX_BUFFERED_BYTES,
  Entity,
  type EntityContent,
  entityTooLarge,
  parseForm,
} from './entity.ts';
export { encodeForm, encodeQuery, type FormFields } from './form.ts';
export {
  checkHeaderFields,
  headerFieldProblem,
  invalidHeaderError,
  isHeaderName,
  isHeaderValue,
  isReasonPhrase,
  responseHead,
} from './header-validation.ts';
export { Headers } from './headers.ts';
export { Request, Response } from './message.ts';
export { Status } from './status.ts';
export { StoredBody, TemporaryStorage, type TemporaryStorageSettings } from './temporary-storage.ts';
export { normalizeRawPath, Uri } from './uri.ts';
