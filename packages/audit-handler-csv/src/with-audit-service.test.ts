import { mkdtempSync, readFileSync } from 'node:fs';
import os, { EOL } from 'node:os';
import path from 'node:path';
import servicePlugin, { type AuditService } from '@portico/audit-service';
import { Context, Request } from '@portico/gateway-core';
import { loadRoute, pluginHeap } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import { ACCESS_COLUMNS } from './columns.ts';
import { parseCsv } from './csv-format.ts';
import csvPlugin from './index.ts';

/**
 * The handler as the incumbents' files declare it, in an AuditService's `event-handlers` by its fully
 * qualified class name, given events by the service: the rows a route's requests leave.
 */
describe('CsvAuditEventHandler in an AuditService', () => {
  it('loads the incumbents’ declaration and writes one row per request a route answers', async () => {
    const base = mkdtempSync(path.join(os.tmpdir(), 'portico-csv-service-'));
    const { heap, logger } = pluginHeap({
      plugins: [servicePlugin, csvPlugin],
      file: 'config/config.json',
      environment: { baseDirectory: base },
      properties: { frConfigs: { igAuditDir: 'audit' } },
      heap: [
        {
          name: 'CSVAuditService',
          type: 'AuditService',
          config: {
            config: {},
            'event-handlers': [
              {
                class: 'org.forgerock.audit.handlers.csv.CsvAuditEventHandler',
                config: {
                  name: 'csv',
                  logDirectory: '${openig.baseDirectory.path}/${frConfigs.igAuditDir}',
                  topics: ['access'],
                },
              },
            ],
          },
        },
      ],
    });
    const route = await loadRoute({
      id: 'r',
      file: 'config/routes/r.json',
      json: {
        auditService: 'CSVAuditService',
        handler: { type: 'StaticResponseHandler', config: { status: 404 } },
      },
      parentHeap: heap,
      logger,
    });
    for (let i = 0; i < 3; i++) {
      await route.handle(
        new Context({
          client: {
            remoteAddress: '10.0.0.9',
            remotePort: 40000 + i,
            localAddress: '10.0.0.1',
            localPort: 8080,
          },
        }),
        new Request({ uri: `http://gw.example/p/${i}?q=${i}`, headers: { host: 'gw.example' } }),
      );
    }
    const service = await heap.get<AuditService>('CSVAuditService');
    await service.close();
    const file = path.join(base, 'audit', 'access.csv');
    const { rows } = parseCsv(readFileSync(file, 'utf8'), {
      quoteChar: '"',
      delimiterChar: ',',
      endOfLineSymbols: EOL,
    });
    expect(rows[0]!.cells).toEqual(ACCESS_COLUMNS);
    expect(rows).toHaveLength(4);
    const row = Object.fromEntries(ACCESS_COLUMNS.map((column, i) => [column, rows[1]!.cells[i]]));
    expect(row).toMatchObject({
      eventName: 'OPENIG-HTTP-ACCESS',
      'http.request.method': 'GET',
      'http.request.path': 'http://gw.example/p/0',
      'http.request.queryParameters': '{"q":["0"]}',
      'response.status': 'FAILED',
      'response.statusCode': '404',
      'response.elapsedTimeUnits': 'MILLISECONDS',
    });
    expect(row._id).toMatch(/./);
    expect(row.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  });
});
