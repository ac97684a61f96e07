import v8 from 'node:v8';

/** Sets V8 flags (node:v8's, by default). */
export type SetFlags = (flags: string) => void;

const SWITCHES = ['--maglev', '--turbofan'] as const;

/** Flags whose mention on the command line means the user chose the compilers' state already. */
const USER_CHOICE = /--(no-)?(maglev|turbofan|opt|jitless)\b/;

/**
 * Switches V8's optimising compilers (Maglev and TurboFan) off while the gateway starts, and returns
 * the function that switches them back on, to be called once it listens.
 *
 * Why: starting up runs code that runs once or a few thousand times (reading and compiling the
 * configuration, one route after another), which the compilers still optimise. That work is thrown
 * away, and it pages in about 8 MB of V8's compiler code and leaves its memory behind: an idle worker
 * holds 69 MB with them on during start-up, 61 MB without; with 1,000 routes 79 against 66 MB, and
 * the first response comes no later (bench/README.md, "Idle memory: no optimising compilers while
 * starting"). V8 reads both flags each time it decides what to optimise, so switching them on again
 * takes effect for the code that gets hot under traffic (optimising-compilers.test.ts checks that
 * against the Node this runs on).
 *
 * The launcher (bin/portico.js) calls this first thing for `portico start`, before any module of
 * the gateway loads (loading them runs the module resolution hooks thousands of times); the start
 * command calls `resumeOptimisingCompilers` once it listens. Left alone when the command line or
 * NODE_OPTIONS names one of these flags (or --jitless).
 */
export function deferOptimisingCompilers(
  options: { setFlags?: SetFlags; execArgv?: readonly string[]; nodeOptions?: string | undefined } = {},
): () => void {
  const setFlags = options.setFlags ?? ((flags: string) => v8.setFlagsFromString(flags));
  const execArgv = options.execArgv ?? process.execArgv;
  const nodeOptions = 'nodeOptions' in options ? options.nodeOptions : process.env.NODE_OPTIONS;
  if (execArgv.some((arg) => USER_CHOICE.test(arg)) || USER_CHOICE.test(nodeOptions ?? '')) return () => {};
  for (const flag of SWITCHES) setFlags(flag.replace('--', '--no-'));
  let resumed = false;
  pending = () => {
    if (resumed) return;
    resumed = true;
    for (const flag of SWITCHES) setFlags(flag);
  };
  return pending;
}

let pending: (() => void) | undefined;

/** Switches the optimising compilers back on, if `deferOptimisingCompilers` switched them off. */
export function resumeOptimisingCompilers(): void {
  pending?.();
  pending = undefined;
}
