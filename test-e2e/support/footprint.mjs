// Preloaded (NODE_OPTIONS=--import) into a gateway process by start-footprint.test.ts: when the
// process exits, it prints which copies of undici and which of Koa's helpers it loaded, for the test
// to read.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
process.on('exit', () => {
  const files = Object.keys(require.cache);
  const footprint = {
    bundledUndici: process.moduleLoadList.some((name) => name.includes('deps/undici')),
    undiciIndex: files.some((file) => /node_modules\/undici\/index\.js$/.test(file)),
    undiciAgent: files.some((file) => /node_modules\/undici\/lib\/dispatcher\/agent\.js$/.test(file)),
    // Koa's helpers for negotiation, types and cookies, which gateway traffic never uses.
    koaHelpers: files.some((file) => /node_modules\/(mime-db|negotiator|keygrip|media-typer)\//.test(file)),
  };
  process.stderr.write(`\nFOOTPRINT ${JSON.stringify(footprint)}\n`);
});
