import { describe, expect, it } from 'vitest';
import { s } from '../config/schema-builders.ts';
import { ErrorCode, type PorticoError } from '../errors.ts';
import { defineHeaplet, definePlugin } from '../heap/heaplet.ts';
import { type Kind, PLUGIN_BRAND } from '../kinds.ts';
import { createMemoryLogger } from '../logging.ts';
import { CORE_VERSION } from './core-version.ts';
import { TypeRegistry } from './registry.ts';

const heaplet = (type: string, kind: Kind, aliases?: string[]) =>
  defineHeaplet({
    type,
    kind,
    config: s.object({}),
    create: () => ({ type }),
    ...(aliases ? { aliases } : {}),
  });

const core = definePlugin({
  name: '@portico/gateway-core',
  version: '0.1.0',
  core: '*',
  heaplets: [
    heaplet('Chain', 'handler', ['ChainHandler']),
    heaplet('StaticResponseHandler', 'handler'),
    heaplet('LocationHeaderFilter', 'filter', ['RedirectFilter']),
    heaplet('CaptureDecorator', 'decorator'),
  ],
});

const audit = definePlugin({
  name: '@portico/audit-handler-csv',
  version: '0.1.0',
  core: '^0.1.0',
  heaplets: [heaplet('CsvAuditEventHandler', 'audit-handler')],
});

function registry(...manifests: Parameters<TypeRegistry['register']>[0][]): TypeRegistry {
  const result = new TypeRegistry({ logger: createMemoryLogger(), coreVersion: '0.1.0' });
  for (const manifest of manifests) result.register(manifest);
  return result;
}

async function failure(promise: Promise<unknown> | (() => unknown)): Promise<PorticoError> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (error) {
    return error as PorticoError;
  }
  throw new Error('expected a failure');
}

describe('TypeRegistry', () => {
  it('resolves types by name and alias, and lists them by kind', async () => {
    const types = registry(core, audit);
    expect((await types.resolve('Chain')).type).toBe('Chain');
    expect(await types.resolve('ChainHandler', 'handler')).toBe(await types.resolve('Chain'));
    expect((await types.resolve('RedirectFilter', 'filter')).type).toBe('LocationHeaderFilter');
    expect(types.knownTypes('handler')).toEqual(['Chain', 'StaticResponseHandler']);
    expect(types.knownTypes()).toEqual([
      'CaptureDecorator',
      'Chain',
      'CsvAuditEventHandler',
      'LocationHeaderFilter',
      'StaticResponseHandler',
    ]);
    expect(types.kindOf('RedirectFilter')).toBe('filter');
    expect(types.kindOf('Nothing')).toBeUndefined();
  });

  it('resolves a Java class name by its simple name, whatever the package', async () => {
    const types = registry(core, audit);
    const csv = await types.resolve('org.forgerock.audit.handlers.csv.CsvAuditEventHandler', 'audit-handler');
    expect(csv.type).toBe('CsvAuditEventHandler');
    expect((await types.resolve('com.example.CsvAuditEventHandler')).type).toBe('CsvAuditEventHandler');
    expect((await failure(types.resolve('org.forgerock.Missing'))).code).toBe(ErrorCode.UNKNOWN_TYPE);
  });

  it('reports an unknown type with the known types of the kind expected', async () => {
    const types = registry(core, audit);
    const error = await failure(types.resolve('StaticResponse', 'handler'));
    expect(error.code).toBe(ErrorCode.UNKNOWN_TYPE);
    expect(error.message).toBe(
      "unknown type 'StaticResponse'; known handler types: Chain, StaticResponseHandler",
    );
    const any = await failure(types.resolve('chain'));
    expect(any.message).toBe(
      "unknown type 'chain' (did you mean 'Chain'?); known types: CaptureDecorator, Chain, " +
        'CsvAuditEventHandler, LocationHeaderFilter, StaticResponseHandler',
    );
  });

  it("adds the app's advice to an unknown type's error, when the registry was given one", async () => {
    const advice = (type: string) =>
      type.endsWith('HeaderFilter') ? `'${type}' is provided by @acme/header: add it` : undefined;
    const types = new TypeRegistry({
      logger: createMemoryLogger(),
      coreVersion: '0.1.0',
      unknownTypeAdvice: advice,
    });
    types.register(core);
    const error = await failure(types.resolve('HeaderFilter', 'filter'));
    expect([error.code, error.message, error.details.unknownType]).toEqual([
      ErrorCode.UNKNOWN_TYPE,
      "unknown type 'HeaderFilter'; known filter types: LocationHeaderFilter; 'HeaderFilter' is provided by @acme/header: add it",
      'HeaderFilter',
    ]);
    // Nothing to say: the error as it was.
    expect((await failure(types.resolve('Nothing'))).message).toMatch(/StaticResponseHandler$/);
    // A registry given none says nothing more.
    expect((await failure(registry(core).resolve('HeaderFilter'))).message).not.toContain('@acme/header');
  });

  it('reports a type of the wrong kind, saying what was expected', async () => {
    const error = await failure(registry(core).resolve('RedirectFilter', 'handler'));
    expect(error.code).toBe(ErrorCode.REFERENCE);
    expect(error.message).toBe("type 'RedirectFilter' is a filter, but a handler is expected here");
    const audit = await failure(registry(core).resolve('Chain', 'audit-handler'));
    expect(audit.message).toContain('an audit-handler is expected');
  });

  it('refuses a type or an alias two plugins provide, naming both', async () => {
    const types = registry(core);
    const clash = definePlugin({
      name: '@acme/portico-chain',
      version: '1.0.0',
      core: '*',
      heaplets: [heaplet('Other', 'handler'), heaplet('Chain', 'handler')],
    });
    const error = await failure(() => types.register(clash));
    expect(error.code).toBe(ErrorCode.DUPLICATE_TYPE);
    expect(error.message).toBe(
      "the type 'Chain' is provided by both '@portico/gateway-core' and '@acme/portico-chain'",
    );
    // Nothing of the refused plugin is registered.
    expect(types.kindOf('Other')).toBeUndefined();

    const alias = definePlugin({
      name: '@acme/redirect',
      version: '1.0.0',
      core: '*',
      heaplets: [heaplet('AcmeRedirect', 'filter', ['RedirectFilter'])],
    });
    expect((await failure(() => types.register(alias))).message).toBe(
      "the alias 'RedirectFilter' (of 'AcmeRedirect') is provided by both '@portico/gateway-core' and " +
        "'@acme/redirect'",
    );
  });

  it('registers the same manifest once however often it is given', () => {
    const types = registry(core, core);
    types.register(core, 'again');
    expect(types.knownTypes('decorator')).toEqual(['CaptureDecorator']);
  });

  it('refuses what is not a manifest, or a plugin made for another core', async () => {
    const types = registry();
    const forged = { ...audit, $$type: 'other' } as never;
    const notManifest = await failure(() => types.register(forged, 'forged'));
    expect(notManifest.code).toBe(ErrorCode.MANIFEST);
    expect(notManifest.message).toBe("plugin 'forged': is not a Portico plugin manifest");

    const future = definePlugin({ ...audit, core: '^2.0.0' });
    const tooNew = await failure(() => types.register(future));
    expect(tooNew.code).toBe(ErrorCode.MANIFEST);
    expect(tooNew.message).toBe(
      "plugin '@portico/audit-handler-csv': needs @portico/gateway-core ^2.0.0, but 0.1.0 is running",
    );
    const badRange = await failure(() => types.register(definePlugin({ ...audit, core: 'latest' })));
    expect(badRange.message).toContain('range is not a semver range');

    const literal = {
      $$type: PLUGIN_BRAND,
      name: 'x',
      version: '1',
      core: '*',
      heaplets: [{ type: 'X', kind: 'f' }],
    };
    const badHeaplet = await failure(() => types.register(literal as never));
    expect(badHeaplet.message).toBe("plugin 'x': heaplet 0 (X) has the unknown kind 'f'");
    expect(types.knownTypes()).toEqual([]);
  });

  it("checks plugins against the core's own version by default", () => {
    expect(CORE_VERSION).toMatch(/^\d+\.\d+\.\d+/);
    const types = new TypeRegistry({ logger: createMemoryLogger() });
    types.register(definePlugin({ ...audit, core: `>=${CORE_VERSION}` }));
    expect(types.knownTypes()).toEqual(['CsvAuditEventHandler']);
  });
});
