import { afterAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';
import { send } from '../support/http.ts';

/**
 * The incumbents' router API through `portico start`, as a deployment tool uses it: a route PUT is
 * served at once by every worker, and is still there after a restart (it is a file in the routes
 * directory); a DELETE is too.
 */
describe('router API, through portico start with two workers', () => {
  const base = instanceDirectory({ 'config/routes/.keep': '' });
  const running: RunningGateway[] = [];
  afterAll(async () => {
    for (const gw of running) await gw.stop();
  });

  const route = {
    condition: "${matches(request.uri.path, '^/deployed')}",
    handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'deployed at run time' } },
  };
  const routes = (gw: RunningGateway) => `${gw.url}/openig/api/system/objects/_router/routes`;

  it('deploys, serves on every worker, keeps across a restart, and undeploys', async () => {
    let gw = await startGateway({ base, workers: 2 });
    running.push(gw);
    expect((await send(`${gw.url}/deployed`)).status).toBe(404);
    const put = await send(`${routes(gw)}/deployed`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(route),
    });
    expect(put.status).toBe(201);
    // Connections spread over both workers: each must serve it (the other one loads the file).
    await expect
      .poll(async () => {
        const answers = await Promise.all(Array.from({ length: 8 }, () => send(`${gw.url}/deployed`)));
        return answers.map((a) => a.status);
      })
      .toEqual(Array(8).fill(200));
    expect(await gw.stop()).toBe(0);
    running.pop();

    gw = await startGateway({ base });
    running.push(gw);
    expect((await send(`${gw.url}/deployed`)).text).toBe('deployed at run time');
    const listed = JSON.parse((await send(`${routes(gw)}?_queryFilter=true`)).text);
    expect(listed.result.map((r: { _id: string }) => r._id)).toEqual(['deployed']);
    expect((await send(`${routes(gw)}/deployed`, { method: 'DELETE' })).status).toBe(200);
    expect((await send(`${gw.url}/deployed`)).status).toBe(404);
  });
});
