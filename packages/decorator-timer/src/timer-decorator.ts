import {
  type Context,
  type DecorationInfo,
  type Decorator,
  Duration,
  defineHeaplet,
  type Filter,
  type Handler,
  type LogSink,
  type Request,
  type Response,
  resolveLogSink,
  s,
} from '@portico/gateway-core';

/** The unit elapsed times are written in: how many nanoseconds it holds and how it is written. */
export interface TimeUnit {
  nanos: number;
  symbol: string;
}

const SYMBOLS = new Map<number, string>([
  [86_400e9, 'd'],
  [3_600e9, 'h'],
  [60e9, 'min'],
  [1e9, 's'],
  [1e6, 'ms'],
  [1e3, 'µs'],
  [1, 'ns'],
]);

/** A unit as `timeUnit` names it (`ms`, `milliseconds`, `seconds` ...), or undefined. */
export function timeUnitOf(name: string): TimeUnit | undefined {
  try {
    const nanos = Number(Duration.parse(`1 ${name}`).toNanos());
    const symbol = SYMBOLS.get(nanos);
    return symbol === undefined ? undefined : { nanos, symbol };
  } catch {
    return undefined;
  }
}

const MILLISECONDS: TimeUnit = { nanos: 1e6, symbol: 'ms' };

/**
 * Times the objects it decorates (`"timer": true`) and writes, at level STAT, to the decorated
 * object's log sink (else the heap's `LogSink`): `Started`, `Elapsed time: <n> ms` (everything,
 * downstream included) and, for a filter, `Elapsed time (within the object): <n> ms` (without the
 * time spent in the handlers after it). Each record reads `<timestamp> (STAT) @Timer[<path>] ...`.
 */
export class TimerDecorator implements Decorator {
  readonly #unit: TimeUnit;

  constructor(unit: TimeUnit = MILLISECONDS) {
    this.#unit = unit;
  }

  /** `decoration` is the `"timer"` value, read by the heaplet's `decoration` schema. */
  async decorate(target: unknown, decoration: boolean, info: DecorationInfo): Promise<unknown> {
    if (!decoration) return target;
    if (info.entryPoint) {
      // The spec leaves the entry point out; the routes and objects behind it can be timed.
      info.heap.logger.warn(
        'the timer does not apply to the gateway entry point; the decoration is ignored',
        {
          ...(info.file === undefined ? {} : { file: info.file }),
          jsonPath: info.jsonPath,
        },
      );
      return target;
    }
    const sink = await resolveLogSink(info.heap, info.logSink);
    const timer = new Timer(sink, `@Timer[${info.objectPath}]`, this.#unit);
    if (info.kind === 'filter') return timer.filter(target as Filter);
    if (info.kind === 'handler') return timer.handler(target as Handler);
    return target;
  }
}

/** The records of one decorated object. */
class Timer {
  readonly #sink: LogSink;
  readonly #source: string;
  readonly #unit: TimeUnit;

  constructor(sink: LogSink, source: string, unit: TimeUnit) {
    this.#sink = sink;
    this.#source = source;
    this.#unit = unit;
  }

  handler(handler: Handler): Handler {
    return {
      handle: async (context: Context, request: Request): Promise<Response> => {
        const start = this.#start(context);
        try {
          return await handler.handle(context, request);
        } finally {
          this.#write(context, `Elapsed time: ${this.#format(performance.now() - start)}`);
        }
      },
    };
  }

  filter(filter: Filter): Filter {
    return {
      filter: async (context: Context, request: Request, next: Handler): Promise<Response> => {
        const start = this.#start(context);
        let downstream = 0;
        const timedNext: Handler = {
          handle: async (c, r) => {
            const entered = performance.now();
            try {
              return await next.handle(c, r);
            } finally {
              downstream += performance.now() - entered;
            }
          },
        };
        try {
          return await filter.filter(context, request, timedNext);
        } finally {
          const total = performance.now() - start;
          this.#write(context, `Elapsed time: ${this.#format(total)}`);
          this.#write(context, `Elapsed time (within the object): ${this.#format(total - downstream)}`);
        }
      },
    };
  }

  #start(context: Context): number {
    this.#write(context, 'Started');
    return performance.now();
  }

  #write(context: Context, message: string): void {
    if (!this.#sink.isLoggable('STAT')) return;
    this.#sink.log({ level: 'STAT', source: this.#source, message, routeId: context.router?.routeId });
  }

  #format(elapsedMs: number): string {
    return `${Math.round((elapsedMs * 1e6) / this.#unit.nanos)} ${this.#unit.symbol}`;
  }
}

export const TimerDecoratorHeaplet = defineHeaplet({
  type: 'TimerDecorator',
  kind: 'decorator',
  config: s.object({
    // PingGateway's setting: the unit elapsed times are written in.
    timeUnit: s
      .string()
      .default('milliseconds')
      .refine(
        (unit) => (timeUnitOf(unit) === undefined ? `'${unit}' is not a time unit` : undefined),
        'a time unit such as ms, milliseconds, us, ns or s',
      ),
  }),
  decoration: s.boolean(),
  create: ({ config }) => new TimerDecorator(timeUnitOf(config.timeUnit)),
});
