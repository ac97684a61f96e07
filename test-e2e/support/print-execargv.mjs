// Preloaded with --import: prints the Node flags the process started with, for process-settings.test.ts.
console.error(`EXECARGV ${JSON.stringify(process.execArgv)}`);
