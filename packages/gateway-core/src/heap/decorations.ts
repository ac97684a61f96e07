import path from 'node:path';
import { childPath } from '../config/parse-context.ts';
import type { PorticoError } from '../errors.ts';
import type { Kind } from '../kinds.ts';
import type { Declaration, Decoration, Where } from './declaration.ts';
import { problem } from './declaration.ts';
import { locate } from './errors.ts';
import type { DecorationInfo, Decorator } from './heaplet.ts';

/** One decoration to apply, with where it is written for error messages. */
export interface DecorationStep extends Where {
  readonly name: string;
  readonly value: unknown;
}

/** A decorator and the decoration's value as its `decoration` schema read it. */
export interface DecorationToApply {
  readonly decorator: Decorator;
  readonly value: unknown;
}

/**
 * The decorator a step names, with its value read; undefined for a name that is ignored (see
 * Heap.unknownDecoration). Throws a coded error at the step.
 */
export type DecoratorLookup = (step: DecorationStep) => Promise<DecorationToApply | undefined>;

/** The decorations written on a declaration, each at `<declaration path>.<decorator name>`. */
export function localSteps(declaration: Declaration): DecorationStep[] {
  return declaration.decorations.map(([name, value]) => ({
    name,
    value,
    file: declaration.file,
    jsonPath: childPath(declaration.jsonPath, name),
  }));
}

/** A heap's `globalDecorators`, each at `$.globalDecorators.<decorator name>` of the heap's file. */
export function globalSteps(decorations: readonly Decoration[], file: string | undefined): DecorationStep[] {
  return decorations.map(([name, value]) => ({
    name,
    value,
    file,
    jsonPath: childPath('$.globalDecorators', name),
  }));
}

/**
 * Applies the local decorations, in the order they are written, then the global ones (the parent
 * heap's first): the later a decoration, the further out its wrapper. Only filters and handlers are
 * decorated; decorators themselves never are, which also keeps decoration from recursing.
 */
export async function decorate(
  target: unknown,
  info: DecorationInfo,
  local: readonly DecorationStep[],
  global: readonly DecorationStep[],
  lookup: DecoratorLookup,
): Promise<unknown> {
  if (!isDecoratable(info.kind)) {
    const [first] = local;
    if (first !== undefined) throw notDecoratable(first, info.name);
    return target;
  }
  let decorated = target;
  for (const step of [...local, ...global]) {
    const found = await lookup(step);
    if (found === undefined) continue;
    try {
      decorated = await found.decorator.decorate(decorated, found.value, {
        ...info,
        file: step.file,
        jsonPath: step.jsonPath,
      });
    } catch (error) {
      throw locate(
        error,
        step,
        `decorator '${step.name}' cannot decorate '${info.name}'`,
        'a decoration value the decorator accepts',
      );
    }
  }
  return decorated;
}

/** A decoration written on an object that is not a filter or a handler (a decorator among others). */
export function notDecoratable(step: DecorationStep, name: string): PorticoError {
  return problem(
    step.file,
    step.jsonPath,
    `'${step.name}' decorates ${name}, but decorators apply to filters and handlers only`,
    'a decoration on a filter or a handler',
  );
}

function isDecoratable(kind: Kind): boolean {
  return kind === 'filter' || kind === 'handler';
}

/**
 * How a decorator names the object it decorates in what it writes: the route (or configuration
 * file) the object is declared in, then its name (`10-api/backend`); an inline object is named by
 * its type and JSON path (`10-api/StaticResponseHandler#$.handler`).
 */
export function objectPath(name: string, file: string | undefined): string {
  const shown = name.replace(/^([^@#]+)@[^#]*#/, '$1#');
  if (file === undefined) return shown;
  const label = path.basename(file, path.extname(file));
  return label === shown ? shown : `${label}/${shown}`;
}
