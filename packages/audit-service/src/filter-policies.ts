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

/** A JSON pointer as its unescaped segments, after the topic. */
type Segments = readonly string[];

/** What a topic's events go through: the fields removed, and the values that drop or keep an event. */
export interface TopicPolicy {
  /** `field.excludeIf`: removed from every event. */
  readonly remove: readonly Segments[];
  /** `value.excludeIf`: an event holding a value at one of these is dropped ... */
  readonly dropIf: readonly Segments[];
  /** ... unless it holds one at one of these (`value.includeIf`). */
  readonly keepIf: readonly Segments[];
}

/** Per topic, its policy. */
export type Exclusions = ReadonlyMap<string, TopicPolicy>;

/**
 * The filter policies of an audit service, each pointer starting with its topic
 * (`/access/http/request/headers/authorization`). By default every event and every field is
 * included. A `field.excludeIf` pointer removes what it names from the topic's events (`field.includeIf`
 * adds nothing: everything is included). A `value.excludeIf` pointer that names a value the event
 * holds drops the whole event, unless a `value.includeIf` pointer also names one it holds (the
 * specification's reading; the incumbents' audit service treats `value` as it treats `field`). A
 * pointer of a topic the service does not know is left out with a warning.
 */
export function exclusionsOf(
  policies: FilterPolicies | undefined,
  topics: readonly string[],
  logger: Logger,
): Exclusions {
  const made = new Map(
    topics.map((topic) => [
      topic,
      { remove: [], dropIf: [], keepIf: [] } as Record<keyof TopicPolicy, Segments[]>,
    ]),
  );
  const add = (pointers: readonly string[] | undefined, key: keyof TopicPolicy) => {
    for (const pointer of pointers ?? []) {
      const segments = segmentsOf(pointer);
      const policy = segments.length > 1 ? made.get(segments[0]!) : undefined;
      if (policy === undefined) {
        logger.warn(
          `the filter policy pointer '${pointer}' names no topic of the audit service (it starts with the topic: /access/...); ignored`,
          { topics },
        );
        continue;
      }
      policy[key].push(segments.slice(1));
    }
  };
  add(policies?.field?.excludeIf, 'remove');
  add(policies?.value?.excludeIf, 'dropIf');
  add(policies?.value?.includeIf, 'keepIf');
  return made;
}

/** Whether a policy changes anything: a topic with none costs nothing per event. */
export function isEmptyPolicy(policy: TopicPolicy | undefined): boolean {
  return policy === undefined || (policy.remove.length === 0 && policy.dropIf.length === 0);
}

/**
 * Applies a topic's policy to `event` (in place): false when the event is to be dropped, else its
 * excluded fields removed and true.
 */
export function applyPolicy(event: Record<string, unknown>, policy: TopicPolicy): boolean {
  const holds = (segments: Segments) => valueAt(event, segments) !== undefined;
  if (policy.dropIf.some(holds) && !policy.keepIf.some(holds)) return false;
  exclude(event, policy.remove);
  return true;
}

/** The value a pointer names in `event`, or undefined. */
function valueAt(event: Record<string, unknown>, segments: Segments): unknown {
  let at: unknown = event;
  for (const segment of segments) {
    if (!isContainer(at)) return undefined;
    at = (at as Record<string, unknown>)[keyIn(at, segment)];
  }
  return at;
}

/** Removes from `event` (in place) what `pointers` name; a pointer naming nothing changes nothing. */
export function exclude(event: Record<string, unknown>, pointers: readonly Segments[]): void {
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
