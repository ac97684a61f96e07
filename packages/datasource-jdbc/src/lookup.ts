import { ErrorCode, type HeapView, PorticoError } from '@portico/gateway-core';
import { isSqlDataSource, type SqlDataSource } from './jdbc-data-source.ts';

/** The environment naming context of Java containers, which the incumbents' data source names start with. */
export const JNDI_PREFIX = 'java:comp/env/';

/**
 * The heap names a data source name may stand for, most specific first. Configurations written for
 * the incumbents name a container-managed data source by its JNDI name (`java:comp/env/jdbc/forgerock`);
 * Portico has no naming service, so the name is looked up in the heap as written, then without the
 * `java:comp/env/` prefix (`jdbc/forgerock`), then as its last segment (`forgerock`).
 */
export function candidateNames(name: string): string[] {
  const names = [name];
  const local = name.startsWith(JNDI_PREFIX) ? name.slice(JNDI_PREFIX.length) : name;
  if (local !== name && local !== '') names.push(local);
  const last = local.slice(local.lastIndexOf('/') + 1);
  if (last !== '' && last !== local) names.push(last);
  return names;
}

/**
 * The data source a heap object's setting names (a heap name or a JNDI-style name), created if
 * needed. A missing or unsuitable object is a REFERENCE error at `where`.
 */
export async function lookupDataSource(
  heap: HeapView,
  name: string,
  where: { file?: string | undefined; jsonPath: string },
): Promise<SqlDataSource> {
  const details = {
    ...(where.file === undefined ? {} : { file: where.file }),
    jsonPath: where.jsonPath,
    expected: `the name of a JdbcDataSource heap object, or its JNDI-style name ${JNDI_PREFIX}jdbc/<name>`,
  };
  const names = candidateNames(name);
  const found = names.find((candidate) => heap.has(candidate));
  if (found === undefined) {
    const tried = names.length > 1 ? ` (looked for ${names.map((n) => `'${n}'`).join(', ')})` : '';
    throw new PorticoError(ErrorCode.REFERENCE, `no data source named '${name}'${tried}`, details);
  }
  let object: unknown;
  try {
    object = await heap.get(found, 'object');
  } catch (error) {
    // The object exists but cannot be created (or is not an object): its own error says why.
    if (error instanceof PorticoError && error.details.file === undefined) throw error.at(details);
    throw error;
  }
  if (!isSqlDataSource(object))
    throw new PorticoError(ErrorCode.REFERENCE, `'${found}' is not a data source`, details);
  return object;
}
