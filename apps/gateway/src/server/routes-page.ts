import { Response } from '@portico/gateway-core';

/**
 * `<admin prefix>/routes`: a read-only page of the routes the gateway's router serves, each route's
 * chain drawn as boxes (its filters, then its handler), and live counters (requests, in progress,
 * errors) read every two seconds from the Prometheus endpoint. The page is one document with no
 * outside resource; its script reads only the router API and the metrics, relative to the page, so
 * it works under any admin prefix. Behind the API protection filter like every admin endpoint.
 */
export function routesPage(): Response {
  const response = Response.text(200, PAGE, 'text/html; charset=UTF-8');
  response.headers.set('Cache-Control', 'no-store');
  // Nothing but itself: no frame, no outside script, style or connection.
  response.headers.set(
    'Content-Security-Policy',
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'",
  );
  return response;
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Portico routes</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1d2433; background: #f7f8fa; }
  h1 { font-size: 20px; margin: 0 0 4px; }
  #status { color: #5b6475; margin-bottom: 16px; }
  table { border-collapse: collapse; width: 100%; background: #fff; }
  th, td { text-align: left; padding: 8px 10px; border-bottom: 1px solid #e3e6ec; vertical-align: top; }
  th { font-weight: 600; background: #eef1f6; }
  td.count { text-align: right; font-variant-numeric: tabular-nums; }
  .chain { display: flex; flex-wrap: wrap; align-items: center; gap: 4px; }
  .box { border: 1px solid #7a8aa6; border-radius: 4px; padding: 2px 6px; background: #eef3ff; white-space: nowrap; }
  .box.handler { background: #e9f7ee; border-color: #5f9c76; }
  .arrow { color: #7a8aa6; }
  .state-FAILED { color: #b3261e; font-weight: 600; }
  code { font-size: 12px; }
</style>
</head>
<body>
<h1>Routes</h1>
<div id="status">Loading…</div>
<table>
  <thead><tr><th>Route</th><th>Condition</th><th>Chain</th><th>State</th><th>Requests</th><th>In progress</th><th>Errors</th></tr></thead>
  <tbody id="routes"></tbody>
</table>
<script>
const text = (tag, value, className) => {
  const element = document.createElement(tag);
  element.textContent = value;
  if (className) element.className = className;
  return element;
};

/** Sums of a few route series by route id, from Prometheus's text format; null when metrics are off. */
async function counters() {
  const answer = await fetch('metrics/prometheus/0.0.4', { cache: 'no-store' });
  if (!answer.ok) return null;
  const sums = {};
  for (const line of (await answer.text()).split('\\n')) {
    const match = /^(ig_route_request_total|ig_route_request_active|ig_route_response_error_total)\\{([^}]*)\\} (\\S+)$/.exec(line);
    if (!match) continue;
    const route = /(?:^|,)route="((?:[^"\\\\]|\\\\.)*)"/.exec(match[2]);
    if (!route) continue;
    const entry = (sums[route[1]] ??= {});
    entry[match[1]] = (entry[match[1]] ?? 0) + Number(match[3]);
  }
  return sums;
}

async function refresh() {
  const answer = await fetch('api/system/objects/_router/routes?_queryFilter=true', { cache: 'no-store' });
  const { result } = await answer.json();
  const sums = await counters().catch(() => null);
  const body = document.getElementById('routes');
  body.replaceChildren(
    ...result.map((route) => {
      const row = document.createElement('tr');
      row.dataset.route = route._id;
      row.append(text('td', route.name));
      const condition = document.createElement('td');
      condition.append(text('code', route.condition ?? '(every request)'));
      row.append(condition);
      const chain = document.createElement('div');
      chain.className = 'chain';
      (route.chain ?? []).forEach((step, i, steps) => {
        if (i > 0) chain.append(text('span', '→', 'arrow'));
        chain.append(text('span', step, i === steps.length - 1 ? 'box handler' : 'box'));
      });
      const chainCell = document.createElement('td');
      chainCell.append(chain);
      row.append(chainCell, text('td', route.state, 'state-' + route.state));
      const counts = sums?.[route._id];
      for (const series of ['ig_route_request_total', 'ig_route_request_active', 'ig_route_response_error_total'])
        row.append(text('td', sums ? String(counts?.[series] ?? 0) : '—', 'count ' + series));
      return row;
    }),
  );
  document.getElementById('status').textContent =
    result.length + ' routes · updated ' + new Date().toLocaleTimeString() + (sums ? '' : ' · metrics are off');
}

const tick = () => refresh().catch((error) => {
  document.getElementById('status').textContent = 'Could not read the routes: ' + error;
}).finally(() => setTimeout(tick, 2000));
tick();
</script>
</body>
</html>
`;
