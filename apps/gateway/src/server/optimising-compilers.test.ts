import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { deferOptimisingCompilers, resumeOptimisingCompilers } from './optimising-compilers.ts';

const MODULE = new URL('./optimising-compilers.ts', import.meta.url).pathname;

describe('the optimising compilers while the gateway starts', () => {
  it('are switched off, then on again once by resumeOptimisingCompilers', () => {
    const flags: string[] = [];
    deferOptimisingCompilers({ setFlags: (f) => flags.push(f), execArgv: [], nodeOptions: '' });
    expect(flags).toEqual(['--no-maglev', '--no-turbofan']);
    resumeOptimisingCompilers();
    expect(flags).toEqual(['--no-maglev', '--no-turbofan', '--maglev', '--turbofan']);
    resumeOptimisingCompilers();
    expect(flags).toHaveLength(4);
  });

  it.each([
    [['--no-turbofan'], ''],
    [[], '--jitless'],
    [[], '--max-old-space-size=200 --no-opt'],
  ])('are left as the user chose them (execArgv %j, NODE_OPTIONS %j)', (execArgv, nodeOptions) => {
    const flags: string[] = [];
    deferOptimisingCompilers({ setFlags: (f) => flags.push(f), execArgv, nodeOptions });
    resumeOptimisingCompilers();
    expect(flags).toEqual([]);
  });

  it.each([['--no-maglev'], ['--maglev']])(
    'leave Maglev as the command line says (%s) and switch TurboFan off and on again',
    (flag) => {
      const flags: string[] = [];
      deferOptimisingCompilers({
        setFlags: (f) => flags.push(f),
        execArgv: ['--max-semi-space-size=4', flag],
        nodeOptions: '',
      });
      resumeOptimisingCompilers();
      expect(flags).toEqual(['--no-turbofan', '--turbofan']);
    },
  );

  it('are not mistaken for a choice by a flag that only ends in -opt', () => {
    const flags: string[] = [];
    deferOptimisingCompilers({ setFlags: (f) => flags.push(f), execArgv: ['--trace-opt'], nodeOptions: '' });
    resumeOptimisingCompilers();
    expect(flags).toHaveLength(4);
  });

  it('optimise nothing while off and hot code again once on, in the Node this runs on', () => {
    // V8 reads both flags each time it decides to optimise: checked with its own trace in a fresh process.
    const script = `
      const { deferOptimisingCompilers, resumeOptimisingCompilers } = await import(${JSON.stringify(MODULE)});
      deferOptimisingCompilers({ execArgv: [], nodeOptions: '' });
      function hot(n) { let x = 0; for (let i = 0; i < n; i++) x += i % 7; return x; }
      for (let k = 0; k < 300; k++) hot(20000);
      console.log('RESUMING');
      resumeOptimisingCompilers();
      for (let k = 0; k < 300; k++) hot(20000);`;
    const output = execFileSync(process.execPath, ['--trace-opt', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    const [before, after] = output.split('RESUMING');
    expect(before).not.toMatch(/completed optimizing/);
    expect(after).toMatch(/completed optimizing.*hot/);
  });
});
