/** One RFC 5424 message read back: what the tests and the e2e check a daemon's file against. */
export interface ParsedMessage {
  pri: number;
  facility: number;
  severity: number;
  version: number;
  timestamp: string;
  hostname: string;
  appName: string;
  procId: string;
  msgId: string;
  sdId: string;
  params: Record<string, string>;
  msg: string;
}

/**
 * Parses one RFC 5424 message holding at most one SD-ELEMENT (what the handler writes), undoing the
 * escapes of its PARAM-VALUEs. Throws on anything else.
 */
export function parseSyslogMessage(line: string): ParsedMessage {
  const head = /^<(\d{1,3})>(\d) (\S+) (\S+) (\S+) (\S+) (\S+) /.exec(line);
  if (head === null) throw new Error(`not an RFC 5424 message: ${line.slice(0, 80)}`);
  let i = head[0].length;
  const params: Record<string, string> = {};
  let sdId = '-';
  if (line[i] === '[') {
    const id = /^\[([^ \]]+)/.exec(line.slice(i))!;
    sdId = id[1]!;
    i += id[0].length;
    while (line[i] === ' ') {
      const name = /^ ([^=]+)="/.exec(line.slice(i));
      if (name === null) throw new Error(`bad SD-PARAM at ${i}: ${line.slice(i, i + 40)}`);
      i += name[0].length;
      let value = '';
      while (line[i] !== '"') {
        if (i >= line.length) throw new Error('unterminated PARAM-VALUE');
        if (line[i] === '\\' && ['"', '\\', ']'].includes(line[i + 1]!)) i++;
        value += line[i++];
      }
      i++;
      params[name[1]!] = value;
    }
    if (line[i] !== ']') throw new Error(`bad SD-ELEMENT end at ${i}: ${line.slice(i, i + 40)}`);
    i++;
  } else if (line[i] === '-') i++;
  const pri = Number(head[1]);
  return {
    pri,
    facility: Math.floor(pri / 8),
    severity: pri % 8,
    version: Number(head[2]),
    timestamp: head[3]!,
    hostname: head[4]!,
    appName: head[5]!,
    procId: head[6]!,
    msgId: head[7]!,
    sdId,
    params,
    msg: line.slice(i).replace(/^ /, '').replace(/\n$/, ''),
  };
}
