// The least work a Node.js reverse proxy can do on undici's `dispatch`: the request's fields passed
// on (but for the hop-by-hop ones), and a handler that writes the upstream's status, fields and each
// chunk of its body to the ServerResponse itself (no Readable body, no promise, no pipe per request).
// Shared by node-floor-dispatch.mjs (behind a bare node:http server) and koa-floor.mjs (behind a Koa
// application in raw-response mode), so that the two floors differ by the server shape alone.
import { Pool } from 'undici';

const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding']);

class Forward {
  constructor(res) {
    this.res = res;
    this.controller = null;
  }
  onRequestStart(controller) {
    this.controller = controller;
  }
  onResponseStart(controller, statusCode) {
    const raw = controller.rawHeaders;
    const out = [];
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i].toString('latin1');
      if (HOP.has(name.toLowerCase())) continue;
      out.push(name, raw[i + 1].toString('latin1'));
    }
    this.res.writeHead(statusCode, out);
  }
  onResponseData(controller, chunk) {
    if (!this.res.write(chunk)) {
      controller.pause();
      this.res.once('drain', () => controller.resume());
    }
  }
  onResponseEnd() {
    this.res.end();
  }
  onResponseError(_c, err) {
    if (!this.res.headersSent) {
      this.res.statusCode = 502;
      this.res.end();
    } else this.res.destroy(err);
  }
}

/** `(req, res) => void`: proxies one request to the upstream on 127.0.0.1:<upstreamPort>. */
export function dispatchProxy(upstreamPort) {
  const pool = new Pool(`http://127.0.0.1:${upstreamPort}`, { connections: 64 });
  return (req, res) => {
    const headers = [];
    const raw = req.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) {
      const n = raw[i].toLowerCase();
      if (n === 'connection' || n === 'keep-alive') continue;
      headers.push(raw[i], raw[i + 1]);
    }
    pool.dispatch(
      {
        path: req.url,
        method: req.method,
        headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? null : req,
      },
      new Forward(res),
    );
  };
}
