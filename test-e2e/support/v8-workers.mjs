// Preloaded (NODE_OPTIONS=--import) by process-settings.test.ts: when the process exits, it prints
// how many of V8's helper threads it has (Node names them V8Worker; Linux lists threads in /proc).
import { readdirSync, readFileSync } from 'node:fs';

process.on('exit', () => {
  let helpers = 0;
  for (const thread of readdirSync('/proc/self/task')) {
    try {
      if (readFileSync(`/proc/self/task/${thread}/comm`, 'utf8').trim() === 'V8Worker') helpers++;
    } catch {
      // A thread that ended while being listed.
    }
  }
  process.stderr.write(`\nV8WORKERS ${helpers}\n`);
});
