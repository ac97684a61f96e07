'use strict';
// What undici's HTTP/2 client gets for `require('node:http2')` in a gateway process (bin/portico.js
// points it here): Node's http2 module, loaded only when something beyond the ten constants undici
// reads as it loads is used. The gateway speaks HTTP/1.1 to upstreams, and loading http2 (with
// node:tls, which it requires) is a measurable part of every start (bench/README.md, "Startup").
// The constants are protocol values (RFC 9113 pseudo-header names, nghttp2 error codes); a test
// checks them against Node's. Any other name, or any function, loads the real module.

// Not frozen: a proxy of a frozen object could not list the real module's other names.
const KNOWN_CONSTANTS = {
  HTTP2_HEADER_AUTHORITY: ':authority',
  HTTP2_HEADER_METHOD: ':method',
  HTTP2_HEADER_PATH: ':path',
  HTTP2_HEADER_SCHEME: ':scheme',
  HTTP2_HEADER_CONTENT_LENGTH: 'content-length',
  HTTP2_HEADER_EXPECT: 'expect',
  HTTP2_HEADER_STATUS: ':status',
  HTTP2_HEADER_PROTOCOL: ':protocol',
  NGHTTP2_NO_ERROR: 0,
  NGHTTP2_REFUSED_STREAM: 7,
};
/** For the test that checks the values against Node's. */
const KNOWN = Symbol.for('portico.deferredHttp2.knownConstants');

let real;
const http2 = () => {
  real ??= require('node:http2');
  return real;
};

/** A proxy that answers `known` names itself and forwards everything else to `target()`. */
function deferred(known, target) {
  return new Proxy(known, {
    get: (own, name) => (Object.hasOwn(own, name) ? own[name] : target()[name]),
    has: (_own, name) => name in target(),
    ownKeys: () => Reflect.ownKeys(target()),
    getOwnPropertyDescriptor: (_own, name) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(target(), name);
      return descriptor && { ...descriptor, configurable: true };
    },
  });
}

const constants = deferred(KNOWN_CONSTANTS, () => http2().constants);
module.exports = deferred({ constants, [KNOWN]: { ...KNOWN_CONSTANTS } }, http2);
