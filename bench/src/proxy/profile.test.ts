import { describe, expect, it } from 'vitest';
import {
  type CallFrame,
  type CpuProfile,
  moduleOf,
  profileComparisonTable,
  summariseProfile,
} from './profile.ts';

const frame = (functionName: string, url = '', lineNumber = 0): CallFrame => ({
  functionName,
  url,
  lineNumber,
});

describe('moduleOf', () => {
  it.each<[CallFrame, string]>([
    [frame('writev'), 'native writev'],
    [frame('(garbage collector)'), '(garbage collector)'],
    [frame('parseHeaders', 'node:internal/http/common.js'), 'node:http'],
    [frame('end', 'node:_http_outgoing'), 'node:http_outgoing'],
    [frame('execute', 'wasm://wasm/00034eea'), 'wasm (llhttp)'],
    [frame('onHeaders', 'file:///repo/node_modules/undici/lib/dispatcher/client-h1.js'), 'undici'],
    [frame('x', 'file:///repo/node_modules/@fastify/reply-from/index.js'), '@fastify/reply-from'],
    [frame('toRequest', 'file:///repo/packages/gateway-core/dist/runtime/index.js'), '@portico/gateway-core'],
    [frame('track', 'file:///repo/apps/gateway/dist/chunks/start.js'), 'portico (app)'],
    [frame('onResponseStart', 'file:///repo/bench/peers/node-floor-dispatch.mjs'), 'bench peer'],
  ])('%j is in %j', (callFrame, module) => {
    expect(moduleOf(callFrame)).toBe(module);
  });
});

describe('summariseProfile', () => {
  // Four nodes; samples every 100 µs from t = 1,000 µs on.
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame('(idle)') },
      { id: 2, callFrame: frame('writev') },
      { id: 3, callFrame: frame('toRequest', 'file:///r/packages/gateway-core/dist/runtime/index.js', 44) },
      { id: 4, callFrame: frame('onHeaders', 'file:///r/node_modules/undici/lib/h1.js', 9) },
    ],
    startTime: 1000,
    endTime: 2000,
    samples: [3, 2, 3, 1, 4, 3, 2, 1, 3, 4],
    timeDeltas: [100, 100, 100, 100, 100, 100, 100, 100, 100, 100],
  };

  it('sums self time per request by module and own function, idle left out, within the window', () => {
    // Samples stamped 1,300 to 1,700 µs: 3 (1300), 1 (1400, idle), 4 (1500), 3 (1600), 2 (1700).
    const summary = summariseProfile(profile, { fromMicros: 1300, toMicros: 1700, requests: 4 });
    expect(summary.samples).toBe(5);
    expect(summary.busyMicrosPerRequest).toBe(100);
    expect(summary.modules).toEqual([
      { name: '@portico/gateway-core', micros: 50 },
      { name: 'undici', micros: 25 },
      { name: 'native writev', micros: 25 },
    ]);
    expect(summary.ownFunctions).toEqual([{ name: 'toRequest (index.js:45)', micros: 50 }]);
  });

  it('sets two summaries side by side with their difference', () => {
    const a = summariseProfile(profile, { fromMicros: 0, toMicros: 5000, requests: 2 });
    const b = summariseProfile(profile, { fromMicros: 1600, toMicros: 5000, requests: 2 });
    const table = profileComparisonTable(['A', 'B'], [a, b]);
    expect(table).toMatch(/\| \*\*all \(idle excluded\)\*\* +\| +400\.0 \| +200\.0 \| +200\.0 \|/);
    // A: toRequest 4 samples × 100 µs over 2 requests = 200; B (from 1,600 µs): 2 samples = 100.
    expect(table).toMatch(/\| @portico\/gateway-core +\| +200\.0 \| +100\.0 \| +100\.0 \|/);
  });
});
