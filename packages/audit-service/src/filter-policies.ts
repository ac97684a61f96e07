import type { Logger } from '@portico/gateway-core';

/** `filterPolicies.field` or `.value`: JSON pointers, each starting with the topic. */
export interface FilterPolicy {
  readonly includeIf?: readonly string[] | undefined;
  readonly excludeIf?: readonly string[] | undefined;
}

export interface FilterPolicies {
  readonly field?: FilterPolicy | undefined;
  readonly value?: FilterPolicy | undefined;
}

/** Per topic, the pointers (as their unescaped segments) of what to remove from its events. */
export type Exclusions = ReadonlyMap<string, readonly (readonly string[])[]>;

/**
 * The exclusions of an audit service's filter policies, as the incumbents' audit service reads them:
 * every pointer of `field.excludeIf` and of `value.excludeIf` names, after its first segment (the
 * topic: `/access/http/request/headers/authorization`), what is removed from that topic's events.
 * Both policies do the same; a pointer of a topic the service does not know is left out with a
 * warning; `includeIf` selects nothing more, since everything is included unless excluded.
 */
export function exclusionsOf(
  policies: FilterPolicies | undefined,
  topics: readonly string[],
  logger: Logger,
): Exclusions {
  const exclusions = new Map<string, string[][]>(topics.map((topic) => [topic, []]));
  for (const policy of [policies?.field, policies?.value]) {
    for (const pointer of policy?.excludeIf ?? []) {
      const segments = segmentsOf(pointer);
      const list = segments.length > 1 ? exclusions.get(segments[0]!) : undefined;
      if (list === undefined) {
        logger.warn(
          `the filter policy pointer '${pointer}' names no topic of the audit service (it starts with the topic: /access/...); ignored`,
          { topics },
        );
        continue;
      }
      list.push(segments.slice(1));
    }
  }
  return exclusions;
}

/** Removes from `event` (in place) what `pointers` name; a pointer naming nothing changes nothing. */
export function exclude(event: Record<string, unknown>, pointers: readonly (readonly string[])[]): void {
  for (const segments of pointers) {
    let parent: unknown = event;
    for (let i = 0; i < segments.length - 1 && parent !== undefined; i++) {
      parent = isContainer(parent)
        ? (parent as Record<string, unknown>)[keyIn(parent, segments[i]!)]
        : undefined;
    }
    if (!isContainer(parent)) continue;
    const last = segments[segments.length - 1]!;
    if (Array.isArray(parent)) {
      const index = Number(last);
      if (Number.isInteger(index) && index >= 0 && index < parent.length) parent.splice(index, 1);
    } else {
      delete (parent as Record<string, unknown>)[keyIn(parent, last)];
    }
  }
}

/**
 * The key of `container` a segment names: itself, else one that differs only in case (header
 * names: `/http/request/headers/authorization` names the field however the client spelled it).
 */
function keyIn(container: object, segment: string): string {
  if (Object.hasOwn(container, segment)) return segment;
  const lower = segment.toLowerCase();
  return Object.keys(container).find((key) => key.toLowerCase() === lower) ?? segment;
}

function isContainer(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

/** `/a/b~1c` → ['a', 'b/c']; the empty pointer has no segments. */
function segmentsOf(pointer: string): string[] {
  const trimmed = pointer.startsWith('/') ? pointer.slice(1) : pointer;
  if (trimmed === '') return [];
  return trimmed.split('/').map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
}
