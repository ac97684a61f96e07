import { execFileSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { makeAuditKeystore } from '@portico/test-support';
import { beforeAll, describe, expect, it } from 'vitest';
import { ACCESS_COLUMNS } from './columns.ts';
import { formatRow, parseCsv } from './csv-format.ts';
import { COMPANION_ENDING, readCompanion, readTamperEvidenceKeys, rowHmac } from './tamper-evidence.ts';
import { verifyCsvFile } from './verify.ts';
import { accessEvent, secureWriter, testKeys } from './writer-fixtures.ts';

/** A closed tamper-evident file of `count` events, signed after every `signEvery` rows. */
function written(count: number, signEvery = 4) {
  const context = secureWriter();
  context.writer.open();
  for (let n = 1; n <= count; n++) {
    context.writer.write(accessEvent(n));
    if (n % signEvery === 0) context.scheduler.runAll();
  }
  context.writer.close();
  return context;
}

function lines(file: string): string[] {
  return readFileSync(file, 'utf8').split(/(?<=\n)/);
}

function verify(file: string) {
  return verifyCsvFile(file, { keys: testKeys().keys });
}

beforeAll(() => {
  testKeys();
}, 120_000);

describe('a tamper-evident file written by the handler', () => {
  it('has the HMAC and SIGNATURE columns after the access columns, every header cell quoted', () => {
    const { file } = written(1);
    expect(lines(file)[0]).toBe(
      formatRow([...ACCESS_COLUMNS, 'HMAC', 'SIGNATURE'], {
        quoteChar: '"',
        delimiterChar: ',',
        endOfLineSymbols: '\n',
      }),
    );
  });

  it('verifies: every row, its signatures, and its end', () => {
    const { file } = written(10);
    expect(verify(file)).toEqual({ ok: true, tamperEvident: true, rows: 10, signatures: 3 });
  });

  it('keeps the chain in <file>.keystore, a JCEKS file under the Base64 of the Password key', () => {
    const { file } = written(3);
    const { keys } = testKeys();
    const chain = readCompanion(file + COMPANION_ENDING, keys.password.toString('base64'));
    expect(chain.initialKey).toHaveLength(32);
    expect(chain.currentKey.equals(chain.initialKey)).toBe(false);
    expect(chain.currentSignature).toHaveLength(256);
    const text = readFileSync(file, 'utf8');
    const last = parseCsv(text, { quoteChar: '"', delimiterChar: ',', endOfLineSymbols: '\n' }).rows.at(-1)!;
    expect(Buffer.from(last.cells.at(-1)!, 'base64').equals(chain.currentSignature!)).toBe(true);
  });

  it('signs every signature row over the last HMAC and the signature before it', () => {
    const { file } = written(2, 1);
    const rows = parseCsv(readFileSync(file, 'utf8'), {
      quoteChar: '"',
      delimiterChar: ',',
      endOfLineSymbols: '\n',
    }).rows;
    // header, row, signature, row, signature (close writes none: nothing new since)
    expect(rows.map((r) => (r.cells.at(-1) === undefined ? 'row' : 'signature'))).toEqual([
      'signature', // the header's SIGNATURE cell
      'row',
      'signature',
      'row',
      'signature',
    ]);
  });

  it("verifies rows whose values hold line breaks of any kind, written as the file's end of line", () => {
    const context = secureWriter();
    context.writer.open();
    const event = accessEvent(1);
    (event as { userId?: string }).userId = 'first\r\nsecond\rthird\nfourth';
    context.writer.write(event);
    context.writer.close();
    expect(readFileSync(context.file, 'utf8')).toContain('"first\nsecond\nthird\nfourth"');
    expect(verify(context.file)).toEqual({ ok: true, tamperEvident: true, rows: 1, signatures: 1 });
  });

  describe('names the first row that was', () => {
    it('altered: a value changed', () => {
      const { file } = written(10);
      const content = lines(file);
      content[4] = content[4]!.replace('"GET"', '"PUT"');
      writeFileSync(file, content.join(''));
      expect(verify(file)).toMatchObject({
        ok: false,
        row: 5,
        problem: 'row 5 was altered: its HMAC does not match its values',
      });
    });

    it('altered: a value emptied', () => {
      const { file } = written(10);
      const content = lines(file);
      content[3] = content[3]!.replace('"tx-3"', '');
      writeFileSync(file, content.join(''));
      expect(verify(file)).toMatchObject({
        ok: false,
        row: 4,
        problem: expect.stringMatching(/^row 4 was altered/),
      });
    });

    it('removed', () => {
      const { file } = written(10);
      const content = lines(file);
      content.splice(2, 1); // the second event
      writeFileSync(file, content.join(''));
      expect(verify(file)).toMatchObject({ ok: false, row: 3, problem: '1 row was removed before row 3' });
    });

    it('removed: several rows', () => {
      const { file } = written(10, 100);
      const content = lines(file);
      content.splice(3, 3);
      writeFileSync(file, content.join(''));
      expect(verify(file)).toMatchObject({ ok: false, row: 4, problem: '3 rows were removed before row 4' });
    });

    it('removed: the last row before a signature', () => {
      const { file } = written(8);
      const content = lines(file);
      content.splice(4, 1); // the 4th event; its signature follows
      writeFileSync(file, content.join(''));
      expect(verify(file)).toMatchObject({
        ok: false,
        row: 5,
        problem: expect.stringMatching(/^row 5 holds a signature that does not match/),
      });
    });

    it('inserted: a forged row', () => {
      const { file } = written(10);
      const content = lines(file);
      content.splice(3, 0, content[3]!.replace('tx-3', 'tx-forged'));
      writeFileSync(file, content.join(''));
      expect(verify(file)).toMatchObject({
        ok: false,
        row: 4,
        problem: 'row 4 was inserted: the row after it continues the chain',
      });
    });

    it('inserted: a copy of an earlier row', () => {
      const { file } = written(10, 100);
      const content = lines(file);
      content.splice(5, 0, content[2]!);
      writeFileSync(file, content.join(''));
      expect(verify(file)).toMatchObject({
        ok: false,
        row: 6,
        problem: expect.stringMatching(
          /^row 6 was inserted: it repeats or moves the row written 3 rows earlier/,
        ),
      });
    });

    it('reordered: two rows swapped', () => {
      const { file } = written(10, 100);
      const content = lines(file);
      [content[3], content[4]] = [content[4]!, content[3]!];
      writeFileSync(file, content.join(''));
      expect(verify(file)).toMatchObject({
        ok: false,
        row: 4,
        problem: 'row 4 is out of order: it was written 1 row later than it stands',
      });
    });

    it('reordered: a signature row moved', () => {
      const { file } = written(8);
      const content = lines(file);
      const [signature] = content.splice(5, 1);
      content.splice(7, 0, signature!);
      writeFileSync(file, content.join(''));
      expect(verify(file)).toMatchObject({ ok: false, row: 8 });
    });
  });

  describe('says its end was cut', () => {
    it('in the middle of a row', () => {
      const { file } = written(10);
      const text = readFileSync(file, 'utf8');
      writeFileSync(file, text.slice(0, text.length - 40));
      expect(verify(file)).toMatchObject({
        ok: false,
        // The last row is the final signature.
        row: 14,
        problem: 'the file ends in the middle of row 14: it was cut short',
      });
    });

    it('after whole rows, the final signature gone', () => {
      const { file } = written(10);
      writeFileSync(file, lines(file).slice(0, -1).join(''));
      expect(verify(file)).toMatchObject({
        ok: false,
        problem: expect.stringMatching(/^the last 2 rows are not signed/),
      });
    });

    it('at an earlier signature: rows and signatures gone', () => {
      const { file } = written(10);
      writeFileSync(file, lines(file).slice(0, 11).join('')); // up to the second signature
      expect(verify(file)).toMatchObject({
        ok: false,
        problem: expect.stringMatching(/^the file ends early: 2 rows were removed from its end/),
      });
    });

    it('to nothing', () => {
      const { file } = written(3);
      writeFileSync(file, '');
      expect(verify(file)).toMatchObject({ ok: false, problem: expect.stringMatching(/file is empty/) });
    });
  });

  it('refuses the keys of another keystore', () => {
    const { file } = written(2);
    const other = makeAuditKeystore();
    const keys = readTamperEvidenceKeys(readFileSync(other.file), other.password);
    expect(verifyCsvFile(file, { keys })).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/cannot be read with these keys/),
    });
  }, 120_000);

  it("is read by a plain CSV parser (Python's csv module) with the incumbents' header", () => {
    const { file } = written(3);
    const script = [
      'import csv, json, sys',
      'rows = list(csv.DictReader(open(sys.argv[1], newline="")))',
      'print(json.dumps(rows))',
    ].join('\n');
    const rows = JSON.parse(execFileSync('python3', ['-c', script, file], { encoding: 'utf8' })) as Record<
      string,
      string
    >[];
    expect(rows).toHaveLength(4); // three events and the final signature
    expect(Object.keys(rows[0]!)).toEqual([...ACCESS_COLUMNS, 'HMAC', 'SIGNATURE']);
    expect(rows[0]).toMatchObject({
      _id: 'id-1',
      eventName: 'OPENIG-HTTP-ACCESS',
      'server.port': '8080',
      'http.request.queryParameters': '{"q":["a \\"quoted\\", value"]}',
      'http.request.headers': '{"host":["gateway.example"],"user-agent":["test\\nagent"]}',
      'response.elapsedTime': '1',
      userId: '',
    });
  });
});

describe('rowHmac', () => {
  it('is HmacSHA256 over the values joined, empty cells left out, as createHmac computes it', () => {
    for (const length of [0, 1, 32, 64, 65, 100]) {
      const key = randomBytes(length);
      const values = ['a', undefined, 'é€ "x"', '', 'z'.repeat(length * 7)];
      expect(rowHmac(key, values)).toBe(
        createHmac('sha256', key).update(values.join(''), 'utf8').digest('base64'),
      );
    }
  });
});
