import v8 from 'node:v8';

/** Sets V8 flags (node:v8's, by default). */
export type SetFlags = (flags: string) => void;

/** V8's optimising compilers, each switched by `--name` and `--no-name`. */
const COMPILERS = ['maglev', 'turbofan'] as const;
type Compiler = (typeof COMPILERS)[number];

/** Flags whose mention on the command line means the user chose every compiler's state already. */
const USER_CHOICE = /--(no-)?(turbofan|opt|jitless)\b/;

/** A compiler the command line names, whose state is left as it says. */
const namedIn = (line: string, compiler: Compiler) => new RegExp(`--(no-)?${compiler}\\b`).test(line);

/** How to switch them back on, and which, while they are off because of `deferOptimisingCompilers`. */
let pending: { setFlags: SetFlags; compilers: Compiler[] } | undefined;

/**
 * Switches V8's optimising compilers (Maglev and TurboFan) off while the gateway starts;
 * `resumeOptimisingCompilers` switches them back on once it listens.
 *
 * Why: starting up runs code that runs once or a few thousand times (resolving and loading modules,
 * reading and compiling the configuration route after route), which the compilers still optimise.
 * That work is thrown away, and it pages in V8's compiler code and leaves its memory behind in every
 * idle worker, without making the first response any sooner (bench/README.md, "Idle memory: no
 * optimising compilers while starting"). V8 reads both flags each time it decides what to optimise, so
 * switching them on again takes effect for the code that gets hot under traffic
 * (optimising-compilers.test.ts checks that against the Node this runs on).
 *
 * The launcher (bin/portico.js) calls this first thing for `portico start`, before any module of
 * the gateway loads (loading them runs the module resolution hooks thousands of times). Left alone
 * when the command line or NODE_OPTIONS names TurboFan, `--opt` or `--jitless`; a compiler the
 * command line names is left as it says (the launcher's own line says `--no-maglev`: see its
 * comment), the others are switched off and back on.
 */
export function deferOptimisingCompilers(
  options: { setFlags?: SetFlags; execArgv?: readonly string[]; nodeOptions?: string | undefined } = {},
): void {
  const setFlags = options.setFlags ?? ((flags: string) => v8.setFlagsFromString(flags));
  const execArgv = options.execArgv ?? process.execArgv;
  const nodeOptions = 'nodeOptions' in options ? options.nodeOptions : process.env.NODE_OPTIONS;
  const line = [...execArgv, nodeOptions ?? ''].join(' ');
  if (USER_CHOICE.test(line)) return;
  const compilers = COMPILERS.filter((compiler) => !namedIn(line, compiler));
  for (const compiler of compilers) setFlags(`--no-${compiler}`);
  pending = { setFlags, compilers };
}

/** Switches the optimising compilers back on, if `deferOptimisingCompilers` switched them off. */
export function resumeOptimisingCompilers(): void {
  const deferred = pending;
  pending = undefined;
  if (deferred === undefined) return;
  for (const compiler of deferred.compilers) deferred.setFlags(`--${compiler}`);
}
