import { createRequire } from 'node:module';

type Satisfies = (version: string, range: string, options: { includePrerelease: boolean }) => boolean;
type ValidRange = (range: string) => string | null;

/**
 * Whether the running core's `version` satisfies a plugin's range of core versions, pre-releases
 * included (a 0.2.0-next.1 core serves plugins written for its release line); undefined when the
 * range is not a semver range at all.
 *
 * Every plugin is checked as the gateway starts, and semver's modules with their first range cost
 * 13-23 ms of that start (a slow machine; Node 24). The forms plugins declare (`>=0.1.0 <1.0.0`, as
 * filter-template has it, `^0.1.0`, as the core's own manifest has it, and `*`) are read here; any
 * other range goes to semver, loaded then. The answers are the same: a property test compares both
 * on random versions and ranges.
 */
export function coreRangeAllows(version: string, range: string): boolean | undefined {
  const quick = quickAnswer(version, range);
  if (quick !== undefined) return quick;
  const semver = loadSemver();
  if (semver.validRange(range) === null) return undefined;
  return semver.satisfies(version, range, { includePrerelease: true });
}

/** major.minor.patch, each number without a leading zero (as semver requires), captured. */
const TRIPLE = String.raw`(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})`;
const VERSION = new RegExp(`^${TRIPLE}(?:-([0-9A-Za-z.-]+))?$`);
const BETWEEN = new RegExp(`^>=${TRIPLE} <${TRIPLE}$`);
const CARET = new RegExp(String.raw`^\^${TRIPLE}$`);

/** The answer for a release-bounded range and a plain version, or undefined to ask semver. */
function quickAnswer(version: string, range: string): boolean | undefined {
  const v = VERSION.exec(version);
  if (v === null) return undefined;
  const core: Version = [Number(v[1]), Number(v[2]), Number(v[3]), v[4] !== undefined];
  if (range === '*') return true;
  const r = BETWEEN.exec(range);
  if (r !== null) {
    const lower: Version = [Number(r[1]), Number(r[2]), Number(r[3]), false];
    const upper: Version = [Number(r[4]), Number(r[5]), Number(r[6]), false];
    return compare(core, lower) >= 0 && compare(core, upper) < 0;
  }
  const c = CARET.exec(range);
  if (c === null) return undefined;
  const [major, minor, patch] = [Number(c[1]), Number(c[2]), Number(c[3])];
  // semver reads ^1.2.3 as <2.0.0-0, ^0.2.3 as <0.3.0-0 and ^0.0.3 as <0.0.4-0: not even a
  // pre-release of the next line, so the core's release numbers must be below the next line's.
  const next: Version =
    major > 0 ? [major + 1, 0, 0, false] : minor > 0 ? [0, minor + 1, 0, false] : [0, 0, patch + 1, false];
  return (
    compare(core, [major, minor, patch, false]) >= 0 && compare([core[0], core[1], core[2], false], next) < 0
  );
}

/** major, minor, patch, and whether it is a pre-release (which sorts before its release). */
type Version = [number, number, number, boolean];

function compare(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  return Number(b[3]) - Number(a[3]);
}

let semver: { satisfies: Satisfies; validRange: ValidRange } | undefined;

/** The two functions alone: semver's index loads its whole library (47 modules). */
function loadSemver(): { satisfies: Satisfies; validRange: ValidRange } {
  if (semver === undefined) {
    const load = createRequire(import.meta.url);
    semver = {
      satisfies: load('semver/functions/satisfies.js') as Satisfies,
      validRange: load('semver/ranges/valid.js') as ValidRange,
    };
  }
  return semver;
}
