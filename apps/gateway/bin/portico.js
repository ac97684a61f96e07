#!/usr/bin/env node
// Entry point of the `portico` command. Workspace packages resolve to their TypeScript sources
// (the `portico-source` export condition), which Node 24 runs directly by stripping types.
import module from 'node:module';

module.registerHooks({
  resolve(specifier, context, nextResolve) {
    return nextResolve(specifier, { ...context, conditions: [...context.conditions, 'portico-source'] });
  },
});

const { main } = await import('../src/cli.ts');
process.exitCode = await main(process.argv.slice(2));
