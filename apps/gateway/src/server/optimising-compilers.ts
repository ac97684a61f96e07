import v8 from 'node:v8';

/** Sets V8 flags (node:v8's, by default). */
export type SetFlags = (flags: string) => void;

/** V8's optimising compilers, each switched by `--name` and `--no-name`. */
const COMPILERS = ['maglev', 'turbofan'] as const;

/** Flags whose mention on the command line means the user chose the compilers' state already. */
const USER_CHOICE = /--(no-)?(maglev|turbofan|opt|jitless)\b/;

/** How to switch them back on, while they are off because of `deferOptimisingCompilers`. */
let pending: SetFlags | undefined;

/**
 * Switches V8's optimising compilers (Maglev and TurboFan) off while the gateway starts;
 * `resumeOptimisingCompilers` switches them back on once it listens.
 *
 * Why: starting up runs code that runs once or a few thousand times (resolving and loading modules,
 * reading and compiling the configuration route after route), which the compilers still optimise.
 * That work is thrown away, and it pages in V8's compiler code and leaves its memory behind: an idle
 * worker held 69 MB with them on during start-up, 62.5 MB without; with 1,000 routes 78–79 against
 * 67.5–67.8 MB, and the first response came no later (bench/README.md, "Idle memory: no optimising
 * compilers while starting"). V8 reads both flags each time it decides what to optimise, so
 * switching them on again takes effect for the code that gets hot under traffic
 * (optimising-compilers.test.ts checks that against the Node this runs on).
 *
 * The launcher (bin/portico.js) calls this first thing for `portico start`, before any module of
 * the gateway loads (loading them runs the module resolution hooks thousands of times). Left alone
 * when the command line or NODE_OPTIONS names one of these flags (or --jitless).
 */
export function deferOptimisingCompilers(
  options: { setFlags?: SetFlags; execArgv?: readonly string[]; nodeOptions?: string | undefined } = {},
): void {
  const setFlags = options.setFlags ?? ((flags: string) => v8.setFlagsFromString(flags));
  const execArgv = options.execArgv ?? process.execArgv;
  const nodeOptions = 'nodeOptions' in options ? options.nodeOptions : process.env.NODE_OPTIONS;
  if (execArgv.some((arg) => USER_CHOICE.test(arg)) || USER_CHOICE.test(nodeOptions ?? '')) return;
  for (const compiler of COMPILERS) setFlags(`--no-${compiler}`);
  pending = setFlags;
}

/** Switches the optimising compilers back on, if `deferOptimisingCompilers` switched them off. */
export function resumeOptimisingCompilers(): void {
  const setFlags = pending;
  pending = undefined;
  if (setFlags !== undefined) for (const compiler of COMPILERS) setFlags(`--${compiler}`);
}
