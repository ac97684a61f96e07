import http from 'node:http';
import { Pool } from 'undici';

const [port, upstreamPort] = process.argv.slice(2).map(Number);
const pool = new Pool(`http://127.0.0.1:${upstreamPort}`, { connections: 64 });
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
http
  .createServer({ optimizeEmptyRequests: true }, (req, res) => {
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
  })
  .listen(port, '127.0.0.1');

// Exits on the bench's SIGTERM (rather than dying of it), so that `node --cpu-prof` writes its profile.
process.on('SIGTERM', () => process.exit(0));
