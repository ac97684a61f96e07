import { describe, expect, it } from 'vitest';
import type { ContenderName } from './contenders.ts';
import type { WrkResult } from './load.ts';
import type { Row, ScenarioResult } from './results.ts';
import { evaluateTargets, fasterFloor, unsteadyRounds } from './targets.ts';

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
  it('is the faster of the two floors by their median rounds, the one the floor target reads', () => {
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
    const target = evaluateTargets([result], []).find((t) => t.text.includes('0.95 × the Node floor'));
    expect(target?.text).toContain('(node-floor-dispatch)');
    expect(fasterFloor(plain([row('portico-1', 1, 1)]))).toBeUndefined();
  });
});
