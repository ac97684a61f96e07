import { describe, expect, it } from 'vitest';
import { getProperty } from './access.ts';

describe('getProperty on class instances', () => {
  class Base {
    reads = 0;
    get value(): string {
      this.reads++;
      return `base ${this.reads}`;
    }
  }
  class Derived extends Base {
    override get value(): string {
      return 'derived';
    }
  }

  it("calls the class's getter on every read, with the instance read", () => {
    const one = new Base();
    const two = new Base();
    expect(getProperty(one, 'value')).toBe('base 1');
    expect(getProperty(one, 'value')).toBe('base 2');
    expect(getProperty(two, 'value')).toBe('base 1');
  });

  it('finds each class its own getter, whichever was read first', () => {
    expect(getProperty(new Base(), 'value')).toBe('base 1');
    expect(getProperty(new Derived(), 'value')).toBe('derived');
    expect(getProperty(new Base(), 'value')).toBe('base 1');
  });

  it("lets an instance's own property win over its class's getter", () => {
    const shadowed = new Base();
    Object.defineProperty(shadowed, 'value', { value: 'own', enumerable: true });
    expect(getProperty(new Base(), 'value')).toBe('base 1');
    expect(getProperty(shadowed, 'value')).toBe('own');
  });

  it('sees a getter added to a class after a read of that name found none', () => {
    class Later {}
    expect(getProperty(new Later(), 'added')).toBeNull();
    Object.defineProperty(Later.prototype, 'added', { get: () => 'now', configurable: true });
    expect(getProperty(new Later(), 'added')).toBe('now');
  });

  it("never reads Object.prototype's accessors", () => {
    expect(getProperty(new Base(), '__proto__')).toBeNull();
  });
});
