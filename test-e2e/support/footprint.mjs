// Preloaded (NODE_OPTIONS=--import) into a gateway process by start-footprint.test.ts: when the
// process exits, it prints which copies of undici and which of Koa's helpers it loaded, for the test
// to read.
import module, { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// ES modules are not in require.cache: their files are noted as they load.
const loaded = [];
module.registerHooks({
  load(url, context, nextLoad) {
    loaded.push(url);
    return nextLoad(url, context);
  },
});
process.on('exit', () => {
  const files = Object.keys(require.cache);
  const footprint = {
    bundledUndici: process.moduleLoadList.some((name) => name.includes('deps/undici')),
    undiciIndex: files.some((file) => /node_modules\/undici\/index\.js$/.test(file)),
    undiciAgent: files.some((file) => /node_modules\/undici\/lib\/dispatcher\/agent\.js$/.test(file)),
    // Koa's helpers for negotiation, types and cookies, which gateway traffic never uses.
    koaHelpers: files.some((file) => /node_modules\/(mime-db|negotiator|keygrip|media-typer)\//.test(file)),
    // semver, which only a plugin's core range of an unusual form needs (registry/core-range.ts).
    semver: files.some((file) => /node_modules\/semver\//.test(file)),
    // node:http2, which undici's HTTP/2 client would load (and node:tls with it) for nothing.
    http2: process.moduleLoadList.includes('NativeModule http2'),
    // The files of the core's and the app's dist/ a built gateway loaded (bundles: a handful).
    builtCoreFiles: loaded.filter((url) => url.includes('/gateway-core/dist/')).length,
    builtAppFiles: loaded.filter((url) => url.includes('/apps/gateway/dist/')).length,
  };
  process.stderr.write(`\nFOOTPRINT ${JSON.stringify(footprint)}\n`);
});
