import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { instanceDirectory } from '../support/gateway.ts';
import { runPortico } from '../support/portico.ts';

/**
 * Mistakes in every file of an instance: admin.json does not parse, config.json's Router has a bad
 * setting and an object of an unknown type, and each route file has several mistakes of its own, some
 * behind others (a broken condition before the heap, a missing filter before an inline handler).
 */
const files: Record<string, unknown> = {
  'config/admin.json': '{ "connectors": [ { "port": 19293 } ',
  'config/config.json': {
    heap: [{ name: 'Spare', type: 'NoSuchThing' }],
    handler: { type: 'Router', config: { scanInterval: 'forever' } },
  },
  'config/routes/10-many.json': {
    condition: '${(',
    baseURI: 'http://127.0.0.1:99999',
    heap: [
      {
        name: 'H',
        type: 'HeaderFilter',
        config: { messageType: 'REQUEST', add: { 'X-A': ['${(}'] }, remove: 5 },
      },
      {
        name: 'C',
        type: 'Chain',
        config: {
          filters: ['H', 'Nope'],
          handler: { type: 'StaticResponseHandler', config: { status: 'x', entity: '${(}' } },
        },
      },
    ],
    handler: 'C',
  },
  'config/routes/20-more.json': {
    // A token `portico start -D` would give a value; validate takes the same option.
    baseURI: 'http://&{e2e.upstream.host}:8080',
    heap: [{ name: 'T', tpye: 'Chain', confg: {} }],
    handler: {
      type: 'Chain',
      config: {
        filters: ['Missing1', { type: 'HeaderFilter', config: { messageType: 'NOPE' } }, 'Missing2'],
        handler: { type: 'StaticResponseHandler', config: { status: 99999 } },
      },
    },
    condtion: '${true}',
  },
};

/** Every problem: file, where in it, and what the line says. */
const expected: [string, string, string][] = [
  ['admin.json', 'line 1, column 37', 'unexpected end of file'],
  ['config.json', '$.handler.config.scanInterval', 'forever'],
  ['config.json', '$.heap[0].type', "unknown type 'NoSuchThing'"],
  ['routes/10-many.json', '$.condition', "unclosed '${'"],
  ['routes/10-many.json', '$.baseURI', 'port out of range'],
  ['routes/10-many.json', '$.heap[0].config.add["X-A"][0]', 'unexpected end of expression'],
  ['routes/10-many.json', '$.heap[0].config.remove', 'is not an array'],
  ['routes/10-many.json', '$.heap[1].config.filters[1]', "no heap object named 'Nope'"],
  ['routes/10-many.json', '$.heap[1].config.handler.config.status', '"x" is not an integer'],
  ['routes/10-many.json', '$.heap[1].config.handler.config.entity', 'unexpected end of expression'],
  ['routes/20-more.json', '$.heap[0].type', "the type is missing or empty; did you mean 'type' for 'tpye'?"],
  ['routes/20-more.json', '$.heap[0].confg', "did you mean 'config'?"],
  ['routes/20-more.json', '$.handler.config.filters[0]', "no heap object named 'Missing1'"],
  ['routes/20-more.json', '$.handler.config.filters[1].config.messageType', '"NOPE" is not one of'],
  ['routes/20-more.json', '$.handler.config.filters[2]', "no heap object named 'Missing2'"],
  ['routes/20-more.json', '$.handler.config.handler.config.status', '99999 is not an integer'],
  ['routes/20-more.json', '$.condtion', "did you mean 'condition'?"],
];

describe('portico validate reports every problem of every file in one run', () => {
  it('admin.json, config.json and two route files with many mistakes each', async () => {
    const base = instanceDirectory(files);
    const result = await runPortico(['validate', '--base', base, '-De2e.upstream.host=127.0.0.1']);
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    for (const [file, where, what] of expected) {
      const full = path.join(base, 'config', file);
      expect(
        lines.some(
          (line) =>
            line.startsWith(`PORTICO_E_`) && line.includes(`${full} ${where}: `) && line.includes(what),
        ),
        `${file} ${where} (${what}) in:\n${result.stderr}`,
      ).toBe(true);
    }
    // Each once, and nothing else.
    expect(lines.filter((line) => line.startsWith('PORTICO_E_'))).toHaveLength(expected.length);
    expect(lines.at(-1)).toBe(`${expected.length} problems found`);
    // A parse error names its file once.
    expect(lines.find((line) => line.includes('admin.json'))?.split('admin.json')).toHaveLength(2);
    expect(result.stdout.trim().split('\n')).toEqual([
      'config/admin.json: 1 problem',
      'config/config.json: 2 problems',
      'config/routes/10-many.json: 7 problems',
      'config/routes/20-more.json: 7 problems',
    ]);
  });
});
