export { parseCookieHeaders, type RequestCookie } from './cookies.ts';
export {
  DEFAULT_MAX_BUFFERED_BYTES,
  Entity,
  type EntityContent,
  entityTooLarge,
  parseForm,
} from './entity.ts';
export { Headers } from './headers.ts';
export { Request, Response } from './message.ts';
export { Status } from './status.ts';
export { StoredBody, TemporaryStorage, type TemporaryStorageSettings } from './temporary-storage.ts';
export { Uri } from './uri.ts';
