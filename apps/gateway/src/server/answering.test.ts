import http from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { addAnswering, afterAnswered, answering, removeAnswering } from './answering.ts';

const responseOn = (socket: Socket) => new http.ServerResponse(new http.IncomingMessage(socket));

describe('the responses a connection carries', () => {
  it('reports the first response of a connection once, and every overlapping one', () => {
    const socket = new Socket();
    const [a, b, c] = [responseOn(socket), responseOn(socket), responseOn(socket)];
    expect(addAnswering(socket, a)).toBe(true);
    expect(addAnswering(socket, b)).toBe(false);
    expect(addAnswering(socket, c)).toBe(false);
    expect([...answering(socket)]).toEqual([a, b, c]);
    removeAnswering(socket, b);
    expect([...answering(socket)]).toEqual([a, c]);
    removeAnswering(socket, a);
    expect([...answering(socket)]).toEqual([c]);
    // The slot freed by the first takes the next one; the connection is not new.
    const d = responseOn(socket);
    expect(addAnswering(socket, d)).toBe(false);
    expect(new Set(answering(socket))).toEqual(new Set([c, d]));
    removeAnswering(socket, c);
    removeAnswering(socket, d);
    expect([...answering(socket)]).toEqual([]);
  });

  it('waits for the responses carried now, one aside, or for the connection to close', () => {
    const socket = new Socket();
    const [a, b, c] = [responseOn(socket), responseOn(socket), responseOn(socket)];
    for (const res of [a, b, c]) {
      addAnswering(socket, res);
      // As the server does when a response closes.
      res.once('close', () => removeAnswering(socket, res));
    }
    let called = 0;
    afterAnswered(socket, () => called++, c);
    a.emit('close');
    expect(called).toBe(0);
    b.emit('close');
    expect(called).toBe(1);
    // Nothing carried: at once; a closed connection ends the wait, once.
    afterAnswered(socket, () => called++, c);
    expect(called).toBe(2);
    afterAnswered(socket, () => called++);
    socket.emit('close');
    c.emit('close');
    expect(called).toBe(3);
  });

  it('keeps connections apart', () => {
    const [one, two] = [new Socket(), new Socket()];
    const a = responseOn(one);
    addAnswering(one, a);
    expect(addAnswering(two, responseOn(two))).toBe(true);
    removeAnswering(two, a);
    expect([...answering(one)]).toEqual([a]);
  });
});

describe('where a connection’s responses are kept', () => {
  it('beside the socket: the socket keeps the shape Node gave it', () => {
    const socket = new Socket();
    const before = Reflect.ownKeys(socket);
    const a = responseOn(socket);
    const keysWithResponse = Reflect.ownKeys(socket);
    addAnswering(socket, a);
    addAnswering(socket, responseOn(socket));
    removeAnswering(socket, a);
    expect(Reflect.ownKeys(socket)).toEqual(keysWithResponse);
    expect(before.length).toBeGreaterThan(0);
  });
});
