import http from 'node:http';
import { checkConfig } from '@portico/gateway-core/runtime';
import { describe, expect, it } from 'vitest';
import { httpServerOptions } from './server.ts';
import { adminSchema } from './settings.ts';

const limitsOf = (limits: Record<string, unknown>) => {
  const { value, errors } = checkConfig(adminSchema, { limits });
  if (!value) throw new Error(String(errors));
  return value.limits;
};

describe("each connector's HTTP server", () => {
  it("takes admin.json's limits and checks its timeouts often enough to honour them", () => {
    const options = httpServerOptions(
      limitsOf({ headersTimeout: '2 seconds', requestTimeout: '30 seconds', keepAliveTimeout: '7 seconds' }),
    );
    expect(options).toMatchObject({
      headersTimeout: 2000,
      requestTimeout: 30_000,
      keepAliveTimeout: 7000,
      connectionsCheckingInterval: 200,
      requireHostHeader: false,
    });
  });

  it('bounds the head by a requestTimeout shorter than headersTimeout, instead of a RangeError at start', () => {
    const options = httpServerOptions(limitsOf({ requestTimeout: '20 seconds' }));
    expect([options.headersTimeout, options.requestTimeout]).toEqual([20_000, 20_000]);
    const server = http.createServer(options);
    expect(server.headersTimeout).toBe(20_000);
    server.close();
  });

  it('hands over a request without body headers already ended (no stream steps run for it)', () => {
    expect(httpServerOptions(limitsOf({})).optimizeEmptyRequests).toBe(true);
  });
});
