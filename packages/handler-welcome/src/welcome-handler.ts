import { type Context, defineHeaplet, type Handler, type Request, Response, s } from '@portico/gateway-core';

/**
 * The page: says which software answers and where its documentation is, and nothing about the
 * instance (no version, no configuration), since anyone who can reach the gateway may read it.
 */
export const WELCOME_PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Portico</title>
</head>
<body>
<h1>Portico is running</h1>
<p>This gateway has no route for this address yet. Routes are JSON files in the instance's
<code>config/routes</code> directory; each names the requests it takes and where they go.</p>
<p>The documentation: <a href="https://github.com/portico-gateway/portico#readme">github.com/portico-gateway/portico</a>.</p>
</body>
</html>
`;

/**
 * WelcomeHandler answers with a fixed HTML page saying the gateway is running: what a fresh
 * installation shows at `/` before any route takes that path (the incumbents' default config.json
 * sends `GET /` to one). It has no settings.
 */
export class WelcomeHandler implements Handler {
  async handle(_context: Context, _request: Request): Promise<Response> {
    return Response.text(200, WELCOME_PAGE, 'text/html; charset=UTF-8');
  }
}

export const WelcomeHandlerHeaplet = defineHeaplet({
  type: 'WelcomeHandler',
  kind: 'handler',
  config: s.object({}),
  create: () => new WelcomeHandler(),
});
