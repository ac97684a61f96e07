import { describe, expect, it } from 'vitest';
import type { ContenderName } from './contenders.ts';
import type { LatencyResult, WrkResult } from './load.ts';
import type { Row, ScenarioResult } from './results.ts';
import {
  addedByRound,
  evaluateTargets,
  fasterFloor,
  roundOrder,
  tailRate,
  tailTarget,
  unsteadyRounds,
} from './targets.ts';

const wrk = (requestsPerSecond: number) => ({ requestsPerSecond }) as WrkResult;
const row = (contender: ContenderName, requestsPerSecond: number, round: number): Row => ({
  contender,
  status: 'ok',
  round,
  wrk: wrk(requestsPerSecond),
});
const plain = (rows: Row[]): ScenarioResult => ({
  name: 'plain',
  description: '',
  path: '/x',
  responseBytes: 100,
  rows,
});

describe('unsteadyRounds', () => {
  it('warns when one contender’s rounds differ by more than a quarter, naming it', () => {
    const result = plain([
      row('portico-1', 9081, 1),
      row('node-floor-dispatch', 9916, 1),
      row('portico-1', 4236, 2),
      row('node-floor-dispatch', 8054, 2),
    ]);
    const [warning, ...rest] = unsteadyRounds([result]);
    expect(rest).toEqual([]);
    expect(warning?.status).toBe('unsteady');
    expect(warning?.value).toBe('portico-1 4236–9081 req/s (+114 %)');
  });

  it('says nothing of steady rounds or of a single round', () => {
    const steady = plain([row('portico-1', 16000, 1), row('portico-1', 17000, 2), row('nginx', 50000, 1)]);
    expect(unsteadyRounds([steady])).toEqual([]);
    expect(evaluateTargets([steady], []).some((target) => target.status === 'unsteady')).toBe(false);
  });
});

describe('fasterFloor', () => {
  it('is the faster of the two bare floors by their median rounds, the one Portico is profiled against', () => {
    const result = plain([
      row('node-floor', 30000, 1),
      row('node-floor-dispatch', 21000, 1),
      row('node-floor', 15000, 2),
      row('node-floor-dispatch', 22000, 2),
      row('node-floor', 16000, 3),
      row('node-floor-dispatch', 20000, 3),
      row('portico-1', 17000, 1),
    ]);
    expect(fasterFloor(result)?.contender).toBe('node-floor-dispatch');
    expect(fasterFloor(result)?.wrk?.requestsPerSecond).toBe(21000);
    expect(fasterFloor(plain([row('portico-1', 1, 1)]))).toBeUndefined();
  });
});

/** A row measured at a fixed rate, with the direct upstream right after it at the same rate. */
const timed = (
  contender: ContenderName,
  round: number,
  rate: number,
  own: { p99: number; p99_9: number },
  direct: { p99: number; p99_9: number },
): Row => {
  const latency = (ms: { p99: number; p99_9: number }) =>
    ({ targetRate: rate, latencyMs: { p50: 0.2, max: 50, ...ms } }) as LatencyResult;
  return { ...row(contender, 20000, round), latency: latency(own), directAtSameRate: latency(direct) };
};
const find = (result: ScenarioResult, text: string) =>
  evaluateTargets([result], []).find((target) => target.text.includes(text));

describe('the fixed rate of the tail targets', () => {
  it('is a quarter of the Koa floor’s closed-loop maximum, rounded, never below 1 req/s', () => {
    expect(tailRate(20000)).toBe(5000);
    expect(tailRate(18_555)).toBe(4639);
    expect(tailRate(2)).toBe(1);
  });

  it('comes from the Koa floor measured first in the first round; later rounds alternate', () => {
    const names = ['direct', 'portico-1', 'koa-floor', 'http-proxy'];
    expect(roundOrder(names, 1, 'koa-floor')).toEqual(['koa-floor', 'direct', 'portico-1', 'http-proxy']);
    expect(roundOrder(names, 2, 'koa-floor')).toEqual(['http-proxy', 'portico-1', 'direct', 'koa-floor']);
    expect(roundOrder(names, 3, 'koa-floor')).toEqual(roundOrder(names, 1, 'koa-floor'));
    expect(roundOrder(names, 1)).toEqual(names);
    expect(roundOrder(names, 2)).toEqual([...names].reverse());
    expect(roundOrder(['direct'], 1, 'koa-floor')).toEqual(['direct']);
  });
});

describe('the throughput targets', () => {
  it('read the floor as the Koa floor, the bare dispatch floor printed for information', () => {
    const result = plain([
      row('portico-1', 19000, 1),
      row('koa-floor', 20000, 1),
      row('node-floor-dispatch', 25000, 1),
    ]);
    const floor = find(result, '0.95 × the Koa floor');
    expect(floor?.status).toBe('met');
    expect(floor?.value).toBe(
      '0.95× (19000 vs 20000 req/s); for information, not a target: 0.76× the bare dispatch floor (25000 req/s)',
    );
    expect(
      find(plain([row('portico-1', 18900, 1), row('koa-floor', 20000, 1)]), '0.95 × the Koa floor')?.status,
    ).toBe('missed');
    expect(find(plain([row('portico-1', 18900, 1)]), '0.95 × the Koa floor')?.status).toBe('not measured');
  });

  it('want 1.5 × Fastify and 1.5 × http-proxy', () => {
    const result = plain([
      row('portico-1', 15000, 1),
      row('fastify-proxy', 10500, 1),
      row('http-proxy', 9900, 1),
    ]);
    expect(find(result, '1.5 × Fastify')?.status).toBe('missed');
    expect(find(result, '1.5 × http-proxy')?.status).toBe('met');
  });
});

describe('the tail targets', () => {
  const rounds = (portico: [number, number][], floor: [number, number][], rate = 5000) => ({
    ...plain([
      ...portico.map(([p99, p99_9], i) =>
        timed('portico-1', i + 1, rate, { p99, p99_9 }, { p99: 1, p99_9: 2 }),
      ),
      ...floor.map(([p99, p99_9], i) =>
        timed('koa-floor', i + 1, rate, { p99, p99_9 }, { p99: 1, p99_9: 2 }),
      ),
    ]),
    tailRate: 5000,
  });

  it('compare Portico’s added latency with the Koa floor’s at the same rate: p99 within 1 ms, p99.9 within 3 ms', () => {
    // Added p99: Portico 2.5, 3.0, 9.0 (median 3.0); the Koa floor 1.5, 2.5, 2.0 (median 2.0).
    // Added p99.9: Portico 6, 7, 40 (median 7); the Koa floor 2, 3, 5 (median 3).
    const result = rounds(
      [
        [3.5, 8],
        [4, 9],
        [10, 42],
      ],
      [
        [2.5, 4],
        [3.5, 5],
        [3, 7],
      ],
    );
    const p99 = find(result, 'p99 added latency');
    expect(p99?.status).toBe('met');
    expect(p99?.text).toContain('at 5000 req/s');
    expect(p99?.value).toBe(
      '+1.000 ms (Portico 3.000 ms, by round 2.500, 3.000, 9.000; Koa floor 2.000 ms, by round 1.500, 2.500, 2.000)',
    );
    const p999 = find(result, 'p99.9 added latency');
    expect(p999?.status).toBe('missed');
    expect(p999?.value).toMatch(/^\+4\.000 ms/);
  });

  it('leave out rounds at another rate and rounds without direct right after', () => {
    const result = rounds([[3, 4]], [[2, 3]]);
    result.rows.push(timed('portico-1', 2, 9000, { p99: 90, p99_9: 90 }, { p99: 1, p99_9: 1 }), {
      ...row('portico-1', 1, 3),
      latency: { targetRate: 5000, latencyMs: { p50: 1, p99: 80, p99_9: 80, max: 80 } } as LatencyResult,
    });
    expect(addedByRound(result, 'portico-1', 'p99')).toEqual([2]);
    expect(addedByRound(plain(result.rows), 'portico-1', 'p99')).toEqual([]);
  });

  it('are not measured without the Koa floor, and the old “at half of Portico’s maximum” ones are gone', () => {
    const result = plain([timed('portico-1', 1, 5000, { p99: 3, p99_9: 4 }, { p99: 1, p99_9: 2 })]);
    const tail = evaluateTargets([result], []).filter((target) => target.text.includes('added latency'));
    expect(tail.map((target) => target.status)).toEqual(['not measured', 'not measured']);
    expect(evaluateTargets([result], []).some((target) => target.text.includes('50 %'))).toBe(false);
    expect(tailTarget('p99', 1, 5000, [], [1]).status).toBe('not measured');
    expect(tailTarget('p99', 1, 5000, [2.5], [1.5]).status).toBe('met');
    expect(tailTarget('p99', 1, 5000, [2.501], [1.5]).status).toBe('missed');
  });
});
