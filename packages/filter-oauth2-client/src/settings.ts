import { type Handler, type HeapView, s } from '@portico/gateway-core';

/** An endpoint setting: an absolute http(s) URL, checked at load (HTTPS is checked at use, per the filter's requireHttps). */
export function endpointUrl() {
  return s.string().refine((url) => {
    if (!URL.canParse(url)) return `'${url}' is not an absolute URL`;
    const { protocol, hash } = new URL(url);
    if (protocol !== 'https:' && protocol !== 'http:') return `'${url}' is not an http(s) URL`;
    if (hash !== '') return `'${url}' has a fragment`;
    return undefined;
  }, 'an http(s) URL');
}

/** The handler a setting names, else the heap's `ClientHandler`, found on first use. */
export function handlerOf(configured: Handler | undefined, heap: HeapView): () => Promise<Handler> {
  let found: Promise<Handler> | undefined;
  return () => {
    if (configured !== undefined) return Promise.resolve(configured);
    found ??= heap.get<Handler>('ClientHandler', 'handler');
    return found;
  };
}
