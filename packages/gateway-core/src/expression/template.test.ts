import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseTemplate } from './template.ts';

const MB = 1024 * 1024;
const TEMPLATE_MODULE = fileURLToPath(new URL('./template.ts', import.meta.url));

/**
 * The heap a parse of `source` (JavaScript giving the text) leaves in use once garbage is collected,
 * in bytes per character, the result held. Measured in a separate Node with `--expose-gc`, so that
 * the figure is not blurred by the test runner's own garbage.
 */
function retainedPerCharacter(source: string): number {
  const script = `
    const { parseTemplate } = await import(${JSON.stringify(TEMPLATE_MODULE)});
    const text = ${source};
    gc();
    const before = process.memoryUsage().heapUsed;
    const parts = parseTemplate(text);
    gc();
    console.log((process.memoryUsage().heapUsed - before) / text.length, parts.length);`;
  const output = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  const [perChar, parts] = output.trim().split(' ').map(Number);
  expect(parts).toBeGreaterThan(0);
  return perChar!;
}

describe('parseTemplate on large texts', () => {
  // Literal text was added a character at a time: 50 MB cost 1.6 GB of heap (about 32 bytes per
  // character) and seconds of one worker. Slices joined once cost about the text itself.
  it('keeps an entity of megabytes of literal text, escapes and expressions in memory linear in its size', () => {
    const chunk = '<p>Lorem ipsum \\${not an expression} dolor sit amet</p>\n';
    const text = `${chunk.repeat(Math.ceil((8 * MB) / chunk.length))}\${request.method}<end/>`;
    expect(
      retainedPerCharacter(
        `${JSON.stringify(chunk)}.repeat(${Math.ceil((8 * MB) / chunk.length)}) + '\${request.method}<end/>'`,
      ),
    ).toBeLessThan(4);
    const parts = parseTemplate(text);
    expect(parts).toHaveLength(3);
    expect(parts[0]).toEqual({
      kind: 'text',
      text: chunk.replaceAll('\\${', '${').repeat(Math.ceil((8 * MB) / chunk.length)),
    });
    expect(parts[1]).toMatchObject({ kind: 'expr', source: '${request.method}' });
    expect(parts[2]).toEqual({ kind: 'text', text: '<end/>' });
  });

  it('keeps a string literal of megabytes inside an expression in memory linear in its size', () => {
    const chunk = "it\\'s a quoted \\\\ text; ";
    const text = `\${'${chunk.repeat(Math.ceil((8 * MB) / chunk.length))}'}`;
    expect(
      retainedPerCharacter(
        `"\${'" + ${JSON.stringify(chunk)}.repeat(${Math.ceil((8 * MB) / chunk.length)}) + "'}"`,
      ),
    ).toBeLessThan(4);
    const parts = parseTemplate(text);
    expect(parts).toMatchObject([
      {
        kind: 'expr',
        node: {
          kind: 'literal',
          value: "it's a quoted \\ text; ".repeat(Math.ceil((8 * MB) / chunk.length)),
        },
      },
    ]);
  });

  it.each<[string, { kind: string; text?: string; source?: string }[]]>([
    ['plain', [{ kind: 'text', text: 'plain' }]],
    ['', [{ kind: 'text', text: '' }]],
    ['\\${a}', [{ kind: 'text', text: '${a}' }]],
    // The first backslash is text; the second makes the expression text.
    ['\\\\${a}', [{ kind: 'text', text: '\\${a}' }]],
    [
      '$${a}#{b}',
      [
        { kind: 'text', text: '$' },
        { kind: 'expr', source: '${a}' },
        { kind: 'expr', source: '#{b}' },
      ],
    ],
    [
      '{${a}}{',
      [
        { kind: 'text', text: '{' },
        { kind: 'expr', source: '${a}' },
        { kind: 'text', text: '}{' },
      ],
    ],
    ['x\\#{y}\\z', [{ kind: 'text', text: 'x#{y}\\z' }]],
  ])('splits %j as before', (text, expected) => {
    expect(parseTemplate(text)).toMatchObject(expected);
  });
});
