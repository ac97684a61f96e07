import { execFileSync } from 'node:child_process';
import http2 from 'node:http2';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const STAND_IN = new URL('../../bin/deferred-http2.cjs', import.meta.url);
const require = createRequire(import.meta.url);
const standIn = require(STAND_IN.pathname) as typeof http2 & Record<symbol, Record<string, unknown>>;

/** Runs `script` in a fresh Node process (this one has loaded node:http2 already) and returns its output. */
const inFreshProcess = (script: string) =>
  execFileSync(process.execPath, ['-e', script], {
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });

describe("the stand-in for node:http2 that undici's HTTP/2 client gets", () => {
  it("answers undici's constants with Node's own values", () => {
    const known = standIn[Symbol.for('portico.deferredHttp2.knownConstants')]!;
    expect(Object.keys(known)).toHaveLength(10);
    for (const [name, value] of Object.entries(known)) {
      expect(value, name).toBe(http2.constants[name as keyof typeof http2.constants]);
      expect(standIn.constants[name as keyof typeof http2.constants]).toBe(value);
    }
  });

  it('hands over the real module for everything else', () => {
    expect(standIn.connect).toBe(http2.connect);
    expect(standIn.createServer).toBe(http2.createServer);
    expect(standIn.constants.HTTP2_METHOD_GET).toBe(http2.constants.HTTP2_METHOD_GET);
    expect(Object.keys(standIn)).toEqual(Object.keys(http2));
  });

  it('loads node:http2 only once something beyond the constants is used', () => {
    const script = `
      const loaded = () => process.moduleLoadList.includes('NativeModule http2');
      const h2 = require(${JSON.stringify(STAND_IN.pathname)});
      const { constants: { HTTP2_HEADER_AUTHORITY, NGHTTP2_REFUSED_STREAM } } = h2;
      const before = loaded();
      const connect = typeof h2.connect;
      console.log(JSON.stringify([HTTP2_HEADER_AUTHORITY, NGHTTP2_REFUSED_STREAM, before, connect, loaded()]));`;
    expect(JSON.parse(inFreshProcess(script))).toEqual([':authority', 7, false, 'function', true]);
  });
});
