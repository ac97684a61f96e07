import { childPath } from '../config/schema.ts';
import type { Declaration, Decoration, Where } from './declaration.ts';
import { problem } from './declaration.ts';
import { locate } from './errors.ts';
import type { DecorationInfo, Decorator, Kind } from './heaplet.ts';

/** One decoration to apply, with where it is written for error messages. */
export interface DecorationStep extends Where {
  readonly name: string;
  readonly value: unknown;
}

/** Finds the decorator object a step names, or throws a REFERENCE error at the step. */
export type DecoratorLookup = (step: DecorationStep) => Promise<Decorator>;

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
    if (first !== undefined) {
      throw problem(
        first.file,
        first.jsonPath,
        `'${first.name}' decorates ${info.name}, but decorators apply to filters and handlers only`,
        'a decoration on a filter or a handler',
      );
    }
    return target;
  }
  let decorated = target;
  for (const step of [...local, ...global]) {
    const decorator = await lookup(step);
    try {
      decorated = await decorator.decorate(decorated, step.value, info);
    } catch (error) {
      throw locate(error, step, `decorator '${step.name}' cannot decorate '${info.name}'`);
    }
  }
  return decorated;
}

function isDecoratable(kind: Kind): boolean {
  return kind === 'filter' || kind === 'handler';
}
