import { describe, expect, it } from 'vitest';
import { TemplateFilter } from './index.ts';

describe('TemplateFilter', () => {
  it('sets the header from a template before calling the next handler', async () => {
    const filter = new TemplateFilter({ header: 'Authorization', value: 'Bearer ${attributes.token}' });
    const request = { headers: {} as Record<string, string[]> };
    const seen = await filter.filter(
      request,
      { attributes: { token: 'abc' } },
      async (r) => r.headers.Authorization,
    );
    expect(seen).toEqual(['Bearer abc']);
  });

  it('removes the header when the value is null', async () => {
    const filter = new TemplateFilter({ header: 'X-User', value: '${attributes.user}' });
    const request = { headers: { 'X-User': ['spoofed'] } };
    await filter.filter(request, { attributes: {} }, async () => undefined);
    expect(request.headers['X-User']).toBeUndefined();
  });

  it('refuses a configuration without a header, with a coded error', () => {
    expect(() => new TemplateFilter({ header: '', value: 'x' })).toThrow(
      expect.objectContaining({
        code: 'PORTICO_E_CONFIG',
        details: expect.objectContaining({ jsonPath: '$.config.header' }),
      }),
    );
  });

  it('refuses a value that is not a valid expression at creation time', () => {
    expect(() => new TemplateFilter({ header: 'X', value: '${unclosed' })).toThrow(
      expect.objectContaining({ code: 'PORTICO_E_EXPRESSION' }),
    );
  });
});
