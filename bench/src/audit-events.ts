import type { AuditEvent } from '@portico/gateway-core/audit';

/**
 * The `n`th access event of the audit handler benchmarks: what a browser's GET through the gateway
 * makes, about 1 KB once written, each with its own `_id`, transaction, path and elapsed time.
 */
export function accessEvent(n: number): AuditEvent {
  return {
    _id: `0b9d5e7c-3f1a-4c55-9e2e-${String(n).padStart(12, '0')}`,
    timestamp: new Date(1_795_000_000_000 + n).toISOString(),
    eventName: 'OPENIG-HTTP-ACCESS',
    transactionId: `7f3c2a10-5b6e-4d8f-a1c2-${String(n).padStart(12, '0')}`,
    server: { ip: '10.0.0.5', port: 8080 },
    client: { ip: '192.0.2.44', port: 40000 + (n % 20000) },
    http: {
      request: {
        secure: true,
        method: 'GET',
        path: `https://api.example.com/v1/orders/${n}`,
        queryParameters: { page: ['2'], size: ['50'] },
        headers: {
          host: ['api.example.com'],
          'user-agent': ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36'],
          accept: ['application/json'],
          'accept-encoding': ['gzip, deflate, br'],
          'accept-language': ['en-GB,en;q=0.9'],
          'x-request-id': [`req-${n}`],
          'x-forwarded-for': ['198.51.100.7'],
          'cache-control': ['no-cache'],
          connection: ['keep-alive'],
          'content-length': ['0'],
        },
        cookies: { session: ['abc123'] },
      },
    },
    response: {
      status: 'SUCCESSFUL',
      statusCode: '200',
      elapsedTime: n % 250,
      elapsedTimeUnits: 'MILLISECONDS',
    },
  };
}
