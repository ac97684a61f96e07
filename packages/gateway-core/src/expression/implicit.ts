import os from 'node:os';
import { EL_CALL, EL_GET, type ElObject, NO_SUCH_METHOD } from './access.ts';
import { toNumber } from './coercion.ts';

/**
 * The implicit objects every expression sees unless the bindings name their own: `system`, `env`
 * and `now`.
 */

/**
 * Process properties, read as `${system['user.home']}`. They start with the Java names
 * configurations use and take `-Dname=value` from the command line (see setSystemProperty).
 */
const systemProperties: Record<string, string> = Object.assign(Object.create(null), {
  'user.home': os.homedir(),
  'user.dir': process.cwd(),
  'user.name': safeUserName(),
  'os.name': os.type(),
  'os.arch': os.arch(),
  'os.version': os.release(),
  'java.io.tmpdir': os.tmpdir(),
  'file.separator': '/',
  'path.separator': ':',
  'line.separator': os.EOL,
  'portico.node.version': process.versions.node,
});

function safeUserName(): string {
  try {
    return os.userInfo().username;
  } catch {
    return process.env.USER ?? '';
  }
}

export function setSystemProperty(name: string, value: string | null): void {
  if (value === null) delete systemProperties[name];
  else systemProperties[name] = value;
}

export function getSystemProperties(): Readonly<Record<string, string>> {
  return systemProperties;
}

const DAY = 86_400_000;
const UNITS: Record<string, number> = {
  Millis: 1,
  Seconds: 1000,
  Minutes: 60_000,
  Hours: 3_600_000,
  Days: DAY,
};

/**
 * `now`: the instant the expression looked at it. `plusSeconds(n)` adds seconds (the incumbent's
 * fork adds days for every plus* method but plusDays; that is a bug we do not copy).
 */
export class Now implements ElObject {
  readonly epochMillis: number;

  constructor(epochMillis: number = Date.now()) {
    this.epochMillis = epochMillis;
  }

  get epochSeconds(): number {
    return Math.floor(this.epochMillis / 1000);
  }

  /** The HTTP date format, e.g. `Sun, 22 Nov 2026 10:00:00 GMT`. */
  get rfc1123(): string {
    return new Date(this.epochMillis).toUTCString();
  }

  get iso8601(): string {
    return new Date(this.epochMillis).toISOString();
  }

  [EL_GET](key: string): unknown {
    switch (key) {
      case 'epochMillis':
        return this.epochMillis;
      case 'epochSeconds':
        return this.epochSeconds;
      case 'rfc1123':
        return this.rfc1123;
      case 'iso8601':
        return this.iso8601;
      default:
        return undefined;
    }
  }

  [EL_CALL](name: string, args: unknown[]): unknown {
    const match = /^(plus|minus)(Millis|Seconds|Minutes|Hours|Days)$/.exec(name);
    if (!match || args.length !== 1) return NO_SUCH_METHOD;
    const amount = toNumber(args[0]) * UNITS[match[2]!]!;
    return new Now(this.epochMillis + (match[1] === 'plus' ? amount : -amount));
  }

  toString(): string {
    return this.iso8601;
  }
}

/** Resolves an implicit object by name, or undefined when the name is not one. */
export function implicitObject(name: string): (() => unknown) | undefined {
  switch (name) {
    case 'system':
      return () => systemProperties;
    case 'env':
      return () => process.env;
    case 'now':
      return () => new Now();
    default:
      return undefined;
  }
}
