import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { Headers } from './headers.ts';
import { answerSocket, endSocketWith, ownResponse } from './own-answer.ts';

/** What a client reads from a socket answered by `answer`, up to the connection's end. */
async function answered(answer: (socket: net.Socket) => void): Promise<string> {
  const server = net.createServer(answer);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const client = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
  let text = '';
  client.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
  });
  await once(client, 'end');
  server.close();
  return text;
}

describe("the gateway's own answers", () => {
  it('a Response: the reason phrase, and as the text body unless another is given', async () => {
    const own = ownResponse(502, 'Bad Gateway');
    expect([own.status, own.reason, await own.entity.text()]).toEqual([502, 'Bad Gateway', 'Bad Gateway']);
    expect(own.headers.toRaw()).toEqual([
      'Content-Type',
      'text/plain; charset=UTF-8',
      'Content-Length',
      '11',
    ]);
    expect(ownResponse(501, 'Not Implemented', 'Not here').headers.get('content-length')).toBe('8');
    // No body: only its length.
    expect(ownResponse(200, 'OK', '').headers.toRaw()).toEqual(['Content-Length', '0']);
  });

  it('on a socket: the same head and body, then Connection: close and the end', async () => {
    expect(await answered((socket) => answerSocket(socket, 404, 'Not Found'))).toBe(
      'HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Length: 9\r\n' +
        'Connection: close\r\n\r\nNot Found',
    );
  });

  it("a response's own framing and connection fields give way to the answer's", async () => {
    const headers = new Headers({ 'X-Kept': 'yes', 'Content-Length': '99', Connection: 'keep-alive' });
    expect(
      await answered((socket) => endSocketWith(socket, 403, 'Forbidden', headers, Buffer.from('no'))),
    ).toBe('HTTP/1.1 403 Forbidden\r\nX-Kept: yes\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno');
  });
});
