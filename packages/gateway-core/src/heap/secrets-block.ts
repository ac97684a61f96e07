import type { PorticoError } from '../errors.ts';
import { isRecord } from '../is-record.ts';
import { type DeclarationResult, isCommentKey, problem, readDeclaration, type Where } from './declaration.ts';

/** A store of a `secrets` block: a heap object's name, or an inline declaration read. */
export interface SecretsBlockEntry {
  readonly jsonPath: string;
  /** The name the store is looked up by: written, or generated for an unnamed inline declaration. */
  readonly name: string | undefined;
  /** Set for an inline declaration: the heap declares it. */
  readonly declared?: DeclarationResult;
}

const EXPECTED = 'an object whose `stores` is an array of secret stores (names or inline declarations)';

/**
 * Reads the `secrets` block of config.json or a route (`{"stores": [...]}`, the incumbents' layout).
 * Every problem is reported, each at its JSON path; values are never quoted (a store's settings
 * often come from the environment).
 */
export function readSecretsBlock(
  block: unknown,
  where: Where,
): { entries: SecretsBlockEntry[]; errors: PorticoError[] } {
  const { file, jsonPath } = where;
  if (!isRecord(block) || !Array.isArray(block.stores)) {
    return {
      entries: [],
      errors: [problem(file, jsonPath, 'the secrets block has no list of stores', EXPECTED)],
    };
  }
  const errors: PorticoError[] = [];
  for (const key of Object.keys(block)) {
    if (key !== 'stores' && !isCommentKey(key)) {
      errors.push(
        problem(file, `${jsonPath}.${key}`, `unknown field '${key}' of the secrets block`, EXPECTED),
      );
    }
  }
  const entries = block.stores.map((store, i): SecretsBlockEntry => {
    const at = `${jsonPath}.stores[${i}]`;
    if (typeof store === 'string' && store !== '') return { jsonPath: at, name: store };
    if (!isRecord(store)) {
      errors.push(
        problem(file, at, 'a store is neither a name nor a declaration', 'a name or an inline declaration'),
      );
      return { jsonPath: at, name: undefined };
    }
    const declared = readDeclaration(store, { file, jsonPath: at }, (type) => `${type}@${file ?? ''}#${at}`);
    return { jsonPath: at, name: declared.name, declared };
  });
  return { entries, errors };
}
