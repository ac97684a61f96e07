import { describe, expect, it } from 'vitest';
import { Context } from './context.ts';
import {
  type Observation,
  observationOf,
  observe,
  observing,
  observingFilters,
  watchExchanges,
} from './observation.ts';

const observation: Observation = {
  routed: () => {},
  upstream: () => undefined,
  filter: () => undefined,
};

describe('exchange observation', () => {
  it('answers nothing while no observer watches, even for an observed context', () => {
    expect(observing()).toBe(false);
    const context = new Context();
    observe(context, observation);
    expect(observationOf(context)).toBeUndefined();
  });

  it('finds a root context observation from its children while an observer watches, until it stops', () => {
    const stop = watchExchanges({ filters: true });
    try {
      expect(observing()).toBe(true);
      expect(observingFilters()).toBe(true);
      const root = new Context();
      observe(root, observation);
      expect(observationOf(root.child('router', {}).child('x', 1))).toBe(observation);
      expect(observationOf(new Context())).toBeUndefined();
    } finally {
      stop();
      stop();
    }
    expect(observing()).toBe(false);
    expect(observingFilters()).toBe(false);
  });

  it('keeps the observation without adding a property to the context (its shape stays as made)', () => {
    const stop = watchExchanges();
    try {
      const root = new Context();
      const keys = Reflect.ownKeys(root);
      observe(root, observation);
      expect(Reflect.ownKeys(root)).toEqual(keys);
      expect(observationOf(root)).toBe(observation);
    } finally {
      stop();
    }
  });
});
