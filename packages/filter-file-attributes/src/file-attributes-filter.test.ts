import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, truncateSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Context, compile, evaluateSettled, Request } from '@portico/gateway-core';
import { loadingMap, pluginHeap, recordingHandler, testContext } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import plugin, { type FileAttributesFilter } from './index.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-file-attributes-'));
let counter = 0;

/** Writes a file in a fresh temporary place and returns its path. */
function file(content: string | Buffer, name = `users-${++counter}.csv`): string {
  const full = path.join(dir, name);
  writeFileSync(full, content);
  return full;
}

function heapWith(config: Record<string, unknown>) {
  return pluginHeap({
    plugins: [plugin],
    file: 'routes/file.json',
    heap: [{ name: 'Lookup', type: 'FileAttributesFilter', config }],
  });
}

function filterFrom(config: Record<string, unknown>): Promise<FileAttributesFilter> {
  return heapWith(config).heap.get<FileAttributesFilter>('Lookup', 'filter');
}

const USERS = 'username,password,email\nalice,wonderland,alice@example.com\nbob,builder,bob@example.com\n';

const lookup = (extra: Record<string, unknown>) => ({
  file: file(USERS),
  target: '${attributes.user}',
  key: 'email',
  value: 'bob@example.com',
  ...extra,
});

/** Runs the filter, then reads `expression` as the next filter would. */
async function run(filter: FileAttributesFilter, context: Context = testContext()) {
  await filter.filter(context, new Request({ uri: 'http://app/' }), recordingHandler().handler);
  return {
    context,
    read: (text: string) =>
      compile(text).evaluate({ attributes: context.attributes, session: context.session }),
  };
}

describe('FileAttributesFilter', () => {
  it('exposes the matching record in the target, keyed by the header row', async () => {
    const { read } = await run(await filterFrom(lookup({})));
    expect(read('${attributes.user.username}')).toBe('bob');
    expect(read("${attributes.user['password']}")).toBe('builder');
    expect(read('user ${attributes.user}')).toBe(
      'user {username=bob, password=builder, email=bob@example.com}',
    );
  });

  describe('laziness', () => {
    it('reads the file only when the target is first read', async () => {
      const later = path.join(dir, `later-${++counter}.csv`);
      const { read } = await run(await filterFrom(lookup({ file: later })));
      writeFileSync(later, USERS);
      expect(read('${attributes.user.username}')).toBe('bob');
    });

    it('evaluates value only on first access, with what the request holds by then', async () => {
      const { read, context } = await run(await filterFrom(lookup({ value: '${attributes.who}' })));
      context.attributes.who = 'alice@example.com';
      expect(read('${attributes.user.username}')).toBe('alice');
    });

    it('never touches the file when nothing reads the target', async () => {
      const { heap, logger } = heapWith(lookup({ file: path.join(dir, 'never-there.csv') }));
      await run(await heap.get<FileAttributesFilter>('Lookup', 'filter'));
      expect(logger.records.filter((r) => r.level === 'warn')).toEqual([]);
    });

    it('reads the file again once it changes', async () => {
      const users = file(USERS);
      const filter = await filterFrom(lookup({ file: users }));
      expect((await run(filter)).read('${attributes.user.password}')).toBe('builder');
      writeFileSync(users, USERS.replace('builder', 'rebuilt'));
      utimesSync(users, new Date(), new Date(Date.now() + 5000));
      expect((await run(filter)).read('${attributes.user.password}')).toBe('rebuilt');
    });
  });

  describe('no record', () => {
    it('gives an empty map when no record matches, and logs it', async () => {
      const { heap, logger } = heapWith(lookup({ value: 'carol@example.com' }));
      const { read } = await run(await heap.get<FileAttributesFilter>('Lookup', 'filter'));
      expect(read('${empty attributes.user}')).toBe(true);
      expect(read('${attributes.user.username}')).toBeNull();
      expect(logger.records.some((r) => r.message.includes('no record matches'))).toBe(true);
    });

    it('gives an empty map when the file cannot be read, and logs a warning', async () => {
      const missing = file(USERS);
      unlinkSync(missing);
      const { heap, logger } = heapWith(lookup({ file: missing }));
      const { read } = await run(await heap.get<FileAttributesFilter>('Lookup', 'filter'));
      expect(read('${empty attributes.user}')).toBe(true);
      expect(logger.records.find((r) => r.level === 'warn')?.data).toMatchObject({ file: missing });
    });

    it('refuses, without reading it, a file larger than 32 MiB', async () => {
      const huge = file(USERS);
      // Sparse: no disk is used, yet reading it meant 40 MB read, decoded and parsed per change.
      truncateSync(huge, 40 * 1024 * 1024);
      const { heap, logger } = heapWith(lookup({ file: huge }));
      const started = performance.now();
      const { read } = await run(await heap.get<FileAttributesFilter>('Lookup', 'filter'));
      expect(read('${empty attributes.user}')).toBe(true);
      expect(performance.now() - started).toBeLessThan(200);
      expect(logger.records.find((r) => r.level === 'warn')?.data).toMatchObject({
        file: huge,
        error: 'the file is larger than 33554432 bytes',
      });
    });

    it.skipIf(!existsSync('/dev/zero'))(
      'refuses what is not a regular file: a device, a FIFO without writer (the process never blocks)',
      async () => {
        const fifo = path.join(dir, `fifo-${++counter}`);
        execFileSync('mkfifo', [fifo]);
        // A request's `../` reaching /dev/zero made the old read run, event loop and all, until memory ran out.
        for (const special of ['/dev/zero', fifo]) {
          const { heap, logger } = heapWith(lookup({ file: special }));
          const { read } = await run(await heap.get<FileAttributesFilter>('Lookup', 'filter'));
          expect(read('${empty attributes.user}')).toBe(true);
          expect(logger.records.find((r) => r.level === 'warn')?.data).toMatchObject({
            file: special,
            error: 'not a regular file',
          });
        }
      },
    );

    it('gives an empty map when the key names no column', async () => {
      const { read } = await run(await filterFrom(lookup({ key: 'phone' })));
      expect(read('${empty attributes.user}')).toBe(true);
    });
  });

  describe('separator', () => {
    it('defaults to COMMA, with quoted literals', async () => {
      const users = file('id,name,motto\n1,"Smith, John","say ""hi""\nand go"\n2,plain,x\n');
      const { read } = await run(await filterFrom(lookup({ file: users, key: 'id', value: '1' })));
      expect(read('${attributes.user.name}')).toBe('Smith, John');
      expect(read('${attributes.user.motto}')).toBe('say "hi"\nand go');
      const colon = file('id:name\n1:x\n');
      expect(
        (await run(await filterFrom(lookup({ file: colon, key: 'id', value: '1' })))).read(
          '${empty attributes.user}',
        ),
      ).toBe(true);
    });

    it('TAB separates by tabs, with quoted literals', async () => {
      const users = file('id\tname\r\n7\t"a\tb"\r\n');
      const { read } = await run(
        await filterFrom(lookup({ file: users, separator: 'TAB', key: 'id', value: '7' })),
      );
      expect(read('${attributes.user.name}')).toBe('a\tb');
    });

    it('COLON separates by colons, a backslash escaping the next character', async () => {
      const passwd = file('user:home:shell\nroot:/root:/bin/sh\nweb:C\\:\\\\www:"quoted"\n');
      const { read } = await run(
        await filterFrom(lookup({ file: passwd, separator: 'colon', key: 'user', value: 'web' })),
      );
      expect(read('${attributes.user.home}')).toBe('C:\\www');
      expect(read('${attributes.user.shell}')).toBe('"quoted"');
    });

    it('refuses any other value', async () => {
      await expect(filterFrom(lookup({ separator: 'PIPE' }))).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { file: 'routes/file.json', jsonPath: '$.heap[0].config.separator' },
      });
    });
  });

  describe('header and fields', () => {
    it('header true (the default) never returns the header row', async () => {
      const { read } = await run(await filterFrom(lookup({ key: 'username', value: 'username' })));
      expect(read('${empty attributes.user}')).toBe(true);
    });

    it('header false reads the first row as a record, keyed by column numbers without fields', async () => {
      const { read } = await run(await filterFrom(lookup({ header: false, key: '0', value: 'username' })));
      expect(read("${attributes.user['2']}")).toBe('email');
    });

    it('fields name the columns, overriding the header row', async () => {
      const fields = ['login', 'secret', 'mail'];
      const { read } = await run(await filterFrom(lookup({ fields, key: 'mail' })));
      expect(read('${attributes.user.login}')).toBe('bob');
      expect(read('${attributes.user.username}')).toBeNull();
    });

    it('fields with header false make the first row a record', async () => {
      const { read } = await run(
        await filterFrom(lookup({ fields: ['a', 'b', 'c'], header: false, key: 'a', value: 'username' })),
      );
      expect(read('${attributes.user.c}')).toBe('email');
    });

    it('refuses a header that is not a boolean and fields that are not strings', async () => {
      await expect(filterFrom(lookup({ header: 'sometimes' }))).rejects.toMatchObject({
        details: { jsonPath: '$.heap[0].config.header' },
      });
      await expect(filterFrom(lookup({ fields: 'a,b' }))).rejects.toMatchObject({
        details: { jsonPath: '$.heap[0].config.fields' },
      });
    });
  });

  describe('charset', () => {
    it('defaults to UTF-8', async () => {
      const users = file(Buffer.from('name,city\nzoë,Zürich\n', 'utf8'));
      const { read } = await run(await filterFrom(lookup({ file: users, key: 'name', value: 'zoë' })));
      expect(read('${attributes.user.city}')).toBe('Zürich');
    });

    it('reads the file in the given character set', async () => {
      const users = file(Buffer.from('name,city\nzoë,Zürich\n', 'latin1'));
      const { read } = await run(
        await filterFrom(lookup({ file: users, charset: 'ISO-8859-1', key: 'name', value: 'zoë' })),
      );
      expect(read('${attributes.user.city}')).toBe('Zürich');
    });

    it('refuses an unknown character set', async () => {
      await expect(filterFrom(lookup({ charset: 'EBCDIC-42' }))).rejects.toMatchObject({
        details: { jsonPath: '$.heap[0].config.charset' },
      });
    });
  });

  describe('file, target, key and value', () => {
    it.each(['file', 'target', 'key', 'value'])('%s is required', async (field) => {
      const config: Record<string, unknown> = lookup({});
      delete config[field];
      await expect(filterFrom(config)).rejects.toMatchObject({
        code: 'PORTICO_E_CONFIG',
        details: { jsonPath: `$.heap[0].config.${field}` },
      });
    });

    it('file is an expression, evaluated when the target is read', async () => {
      const users = file(USERS, 'by-name.csv');
      const { read, context } = await run(
        await filterFrom(lookup({ file: `${dir}/\${attributes.fileName}` })),
      );
      context.attributes.fileName = 'by-name.csv';
      expect(read('${attributes.user.username}')).toBe('bob');
      expect(users).toContain('by-name.csv');
    });

    it('target must be assignable, and may be in the session', async () => {
      await expect(filterFrom(lookup({ target: 'user' }))).rejects.toMatchObject({
        code: 'PORTICO_E_EXPRESSION',
      });
      const { read, context } = await run(await filterFrom(lookup({ target: '${session.user}' })));
      expect(read('${session.user.username}')).toBe('bob');
      expect(JSON.parse(JSON.stringify(context.session))).toEqual({
        user: { username: 'bob', password: 'builder', email: 'bob@example.com' },
      });
    });
  });
});

describe('FileAttributesFilter and lazy maps', () => {
  it('waits for a map still loading that `value` reads (a SQL lookup before it)', async () => {
    const filter = await filterFrom(lookup({ value: '${attributes.account.email}' }));
    const context = testContext();
    context.attributes.account = loadingMap({ email: 'bob@example.com' }).map;
    await filter.filter(context, new Request({ uri: 'http://app/' }), recordingHandler().handler);
    const username = compile('${attributes.user.username}');
    await expect(evaluateSettled(username, { attributes: context.attributes })).resolves.toBe('bob');
  });
});
