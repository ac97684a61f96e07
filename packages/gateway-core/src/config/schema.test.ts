import { describe, expect, it } from 'vitest';
import { Duration } from '../duration/index.ts';
import { setSystemProperty } from '../expression/implicit.ts';
import { createMemoryLogger } from '../logging.ts';
import { scriptFields } from '../scripting/script.ts';
import { condition } from './condition-schema.ts';
import { checkConfig, parseConfig } from './parse-config.ts';
import { s } from './schema-builders.ts';
import { resolveTokens } from './tokens.ts';

const logger = createMemoryLogger();

const clientSettings = s.object({
  name: s.string(),
  connections: s.integer({ min: 1 }).default(64),
  secure: s.boolean().default(false),
  soTimeout: s.duration().default(() => Duration.parse('10 seconds')),
  mode: s.enumOf(['REQUEST', 'RESPONSE'] as const).default('REQUEST'),
  comment: s.string().optional(),
  tags: s.array(s.string()).optional(),
  condition: s.expression('boolean').optional(),
  target: s.lvalue().optional(),
});

describe('configuration-time expressions', () => {
  it('evaluates string, integer, boolean and duration settings with env and system', () => {
    process.env.PORTICO_SCHEMA_HOST = 'upstream.local';
    process.env.PORTICO_SCHEMA_CONNS = '16';
    setSystemProperty('portico.schema.secure', 'TRUE');
    const parsed = parseConfig(
      clientSettings,
      {
        name: "${env['PORTICO_SCHEMA_HOST']}",
        connections: "${env['PORTICO_SCHEMA_CONNS']}",
        secure: "${system['portico.schema.secure']}",
        soTimeout: "${'5 seconds'}",
        mode: '${"response"}',
      },
      { logger },
    );
    expect(parsed).toMatchObject({ name: 'upstream.local', connections: 16, secure: true, mode: 'RESPONSE' });
    expect(parsed.soTimeout.toMillis()).toBe(5000);
  });

  it('sees the heap properties, by name and under properties', () => {
    const parsed = parseConfig(
      s.object({ a: s.string(), b: s.string() }),
      { a: '${urls.app}/x', b: "${properties.urls['app']}" },
      {
        properties: { urls: { app: 'http://app:8081' } },
        logger,
      },
    );
    expect(parsed).toEqual({ a: 'http://app:8081/x', b: 'http://app:8081' });
  });

  it('a required setting that evaluates to null is an error naming its JSON path', () => {
    const { errors } = checkConfig(
      clientSettings,
      { name: "${env['PORTICO_NOT_SET_EVER']}" },
      { file: 'config.json', jsonPath: '$.heap[0].config', logger },
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: 'config.json', jsonPath: '$.heap[0].config.name', expected: 'a string' },
    });
    expect(errors[0]!.message).toContain('evaluated to null');
  });

  it('a checked (refined) setting that evaluates to null is unset when optional, defaulted, or an error', () => {
    const short = s
      .string()
      .refine((value) => (value.length <= 3 ? undefined : 'too long'), 'at most 3 characters');
    const schema = s.object({ a: short.optional(), b: short.default('abc'), c: short });
    const unset = "${env['PORTICO_NOT_SET_EVER']}";
    const { errors } = checkConfig(schema, { a: unset, b: unset, c: unset }, { jsonPath: '$', logger });
    expect(errors.map((error) => [error.details.jsonPath, error.message])).toEqual([
      ['$.c', expect.stringContaining('evaluated to null')],
    ]);
    expect(parseConfig(schema, { a: unset, b: unset, c: 'xy' }, { logger })).toEqual({ b: 'abc', c: 'xy' });
    expect(checkConfig(schema, { a: 'long', c: 'xy' }, { logger }).errors[0]?.message).toContain('too long');
  });

  it('an optional setting that evaluates to null falls back to its default', () => {
    const parsed = parseConfig(
      clientSettings,
      { name: 'x', connections: "${env['PORTICO_NOT_SET_EVER']}", secure: '${null}' },
      { logger },
    );
    expect(parsed.connections).toBe(64);
    expect(parsed.secure).toBe(false);
  });

  it('a result of the wrong type is an error', () => {
    const { errors } = checkConfig(clientSettings, { name: 'x', connections: "${'many'}" }, { logger });
    expect(errors[0]).toMatchObject({
      details: { jsonPath: '$.connections', expected: 'an integer of at least 1' },
    });
  });

  it('an expression that does not parse is reported with its JSON path and column', () => {
    const { errors } = checkConfig(clientSettings, { name: '${env[}' }, { file: 'f.json', logger });
    expect(errors[0]).toMatchObject({
      code: 'PORTICO_E_EXPRESSION',
      details: { file: 'f.json', jsonPath: '$.name', column: 7 },
    });
  });

  it('a name no expression knows is warned of with the route, heap object, file, JSON path and column', () => {
    const warned = createMemoryLogger();
    checkConfig(
      clientSettings,
      { name: 'x', condition: '${requst.method}' },
      { route: 'orders', object: 'Guard', file: 'routes/orders.json', logger: warned },
    );
    expect(warned.records).toEqual([
      expect.objectContaining({
        level: 'warn',
        message: expect.stringContaining("'requst' (column 3) is no name an expression knows here"),
        data: expect.objectContaining({
          route: 'orders',
          object: 'Guard',
          file: 'routes/orders.json',
          jsonPath: '$.condition',
          column: 3,
        }),
      }),
    ]);
  });

  describe('values from the environment are described, never quoted', () => {
    const secret = 'hunter2-s3cr3t';
    process.env.PORTICO_SCHEMA_SECRET = secret;
    setSystemProperty('portico.schema.secret', secret);

    it('in the error of a wrong-typed setting, which still names file, JSON path and expectation', () => {
      const { errors } = checkConfig(
        clientSettings,
        {
          name: 'x',
          connections: "${env['PORTICO_SCHEMA_SECRET']}",
          soTimeout: "${system['portico.schema.secret']}",
          secure: "${env['PORTICO_SCHEMA_SECRET'].concat('!')}",
        },
        { file: 'routes/10-db.json', jsonPath: '$.heap[0].config', logger },
      );
      expect(errors.map((e) => e.toString())).toEqual([
        "PORTICO_E_CONFIG routes/10-db.json $.heap[0].config.connections: the value of ${env['PORTICO_SCHEMA_SECRET']} (14 characters, not shown) is not an integer of at least 1 (expected an integer of at least 1)",
        "PORTICO_E_CONFIG routes/10-db.json $.heap[0].config.secure: the value of ${env['PORTICO_SCHEMA_SECRET'].concat('!')} (15 characters, not shown) is not true or false (expected true or false)",
        `PORTICO_E_CONFIG routes/10-db.json $.heap[0].config.soTimeout: the value of \${system['portico.schema.secret']} (14 characters, not shown) is not a duration such as "10 seconds" or "unlimited" (expected a duration such as "10 seconds" or "unlimited")`,
      ]);
      for (const error of errors) expect(JSON.stringify(error.toJSON())).not.toContain('hunter2');
    });

    it('while a value written in the file, or computed without the environment, is still quoted', () => {
      const { errors } = checkConfig(
        clientSettings,
        { name: 'x', connections: 'hunter2', soTimeout: "${'five'.concat(' ages')}" },
        { logger },
      );
      expect(errors.map((e) => e.message)).toEqual([
        '"hunter2" is not an integer of at least 1',
        '"five ages" is not a duration such as "10 seconds" or "unlimited"',
      ]);
    });

    it("in a refinement's problem, which quotes what it was given", () => {
      const header = s.object({
        name: s
          .string()
          .refine((n) => (/^[\w-]+$/.test(n) ? undefined : `'${n}' is not a header name`), 'a header name'),
      });
      const fromEnv = checkConfig(
        header,
        { name: "${env['PORTICO_SCHEMA_SECRET'].concat(' x')}" },
        { logger },
      );
      expect(fromEnv.errors.map((e) => e.message)).toEqual([
        "the value of ${env['PORTICO_SCHEMA_SECRET'].concat(' x')} (16 characters, not shown) is not a header name",
      ]);
      const written = checkConfig(header, { name: 'a b' }, { logger });
      expect(written.errors.map((e) => e.message)).toEqual(["'a b' is not a header name"]);
      // A check of the whole object, quoting one of its fields.
      const pool = s
        .object({ user: s.string(), password: s.string() })
        .refine(
          (c) => (c.password === c.user ? `${c.password} repeats the user` : undefined),
          'another password',
        );
      const same = checkConfig(
        pool,
        { user: secret, password: "${env['PORTICO_SCHEMA_SECRET']}" },
        { logger },
      );
      expect(same.errors.map((e) => e.toString())).toEqual([
        "PORTICO_E_CONFIG $: the problem is not shown: it names the value of ${env['PORTICO_SCHEMA_SECRET']}, which comes from the environment (expected another password)",
      ]);
    });

    it('in the error of a token that took its value from the environment', () => {
      const json = resolveTokens(
        {
          heap: [
            {
              name: 'pool',
              config: {
                connections: '&{db.password}',
                soTimeout: '&{db.timeout|forever}',
                name: { first: '&{db.password}' },
              },
            },
          ],
        },
        { env: { DB_PASSWORD: secret } },
      ) as { heap: [{ config: unknown }] };
      const { errors } = checkConfig(clientSettings, json.heap[0].config, {
        file: 'config.json',
        jsonPath: '$.heap[0].config',
        logger,
      });
      expect(errors.map((e) => e.toString())).toEqual([
        'PORTICO_E_CONFIG config.json $.heap[0].config.name: a map holding the value of &{db.password} (not shown) is not a string (expected a string)',
        'PORTICO_E_CONFIG config.json $.heap[0].config.connections: the value of &{db.password} (14 characters, not shown) is not an integer of at least 1 (expected an integer of at least 1)',
        // A token's default is written in the file: quoted.
        'PORTICO_E_CONFIG config.json $.heap[0].config.soTimeout: "forever" is not a duration such as "10 seconds" or "unlimited" (expected a duration such as "10 seconds" or "unlimited")',
      ]);
      // In an array, and in a map.
      const lists = resolveTokens(
        { ports: ['1', '&{db.password}'], limits: { a: '&{db.password}' } },
        {
          env: { DB_PASSWORD: secret },
        },
      );
      const listed = checkConfig(
        s.object({ ports: s.array(s.integer()), limits: s.map(s.integer()) }),
        lists,
        {
          logger,
        },
      );
      expect(listed.errors.map((e) => `${e.details.jsonPath}: ${e.message}`)).toEqual([
        '$.ports[1]: the value of &{db.password} (14 characters, not shown) is not an integer',
        '$.limits.a: the value of &{db.password} (14 characters, not shown) is not an integer',
      ]);
    });

    it('in an object or array given where an expression, a condition or script text was expected', () => {
      const json = resolveTokens(
        {
          value: { a: '&{db.password}' },
          target: ['&{db.password}'],
          condition: { expression: '${true}', other: '&{db.password}' },
          source: ['line', { a: '&{db.password}' }],
        },
        { env: { DB_PASSWORD: secret } },
      );
      const { errors } = checkConfig(
        s.object({
          value: s.expression('any'),
          target: s.lvalue(),
          condition: condition(),
          source: scriptFields.source,
        }),
        json,
        { logger },
      );
      expect(errors.map((e) => `${e.details.jsonPath}: ${e.message}`)).toEqual([
        '$.value: a map holding the value of &{db.password} (not shown) is not an expression',
        '$.target: a list holding the value of &{db.password} (not shown) is not an assignable expression such as "${attributes.name}"',
        '$.condition: a map holding the value of &{db.password} (not shown) is not a condition',
        '$.source: a list holding the value of &{db.password} (not shown) is not script text',
      ]);
    });

    it('in the error of an expression reading a property a token took from the environment', () => {
      const properties = resolveTokens(
        { pw: '&{db.password}', db: { pw: '&{db.password}' }, written: 'hunter2' },
        { env: { DB_PASSWORD: secret } },
      ) as Record<string, unknown>;
      const { errors } = checkConfig(
        s.object({ a: s.integer(), b: s.integer(), c: s.integer(), d: s.integer() }),
        { a: '${pw}', b: "${properties['pw']}", c: '${db.pw}', d: '${written}' },
        { logger, properties },
      );
      expect(errors.map((e) => `${e.details.jsonPath}: ${e.message}`)).toEqual([
        '$.a: the value of ${pw} (14 characters, not shown) is not an integer',
        "$.b: the value of ${properties['pw']} (14 characters, not shown) is not an integer",
        '$.c: the value of ${db.pw} (14 characters, not shown) is not an integer',
        // Written in the file: quoted.
        '$.d: "hunter2" is not an integer',
      ]);
      // A run-time expression reading it describes its values in its evaluation warnings.
      const warned = createMemoryLogger();
      const parsed = parseConfig(
        s.object({ e: s.expression('any') }),
        { e: '${pw * 2}' },
        {
          logger: warned,
          properties,
        },
      );
      expect(parsed.e.evaluate({})).toBeNull();
      expect(warned.records.map((r) => r.data?.problem)).toEqual([
        'cannot convert a value (14 characters, not shown) to a number',
      ]);
    });

    it('in an expression a token completed: its text, errors and warnings show it as written', () => {
      const warned = createMemoryLogger();
      const json = resolveTokens(
        {
          broken: "${request.uri.path == '&{db.password}' &&& }",
          pattern: "${matches(request.uri.path, '&{db.password}(')}",
          target: '${attributes[&{db.password}}',
          condition: { expression: "${'&{db.password}' == ''}" },
          unknown: '${&{db.password}}',
          converted: "${'&{db.password}' * 2}",
          count: "${'&{db.password}' == '' ? 1 : null}",
        },
        { env: { DB_PASSWORD: secret } },
      );
      const schema = s.object({
        broken: s.expression('boolean'),
        pattern: s.expression('boolean'),
        target: s.lvalue(),
        condition: condition(),
        unknown: s.expression('any'),
        converted: s.expression('any'),
        count: s.integer(),
      });
      const { value, errors } = checkConfig(schema, json, { logger: warned });
      const compiles = 'does not compile with the values of its configuration tokens';
      expect(errors.map((e) => [e.details.jsonPath, e.message, e.details.text])).toEqual([
        [
          '$.broken',
          expect.stringContaining(`"\${request.uri.path == '&{db.password}' &&& }" ${compiles}`),
          "${request.uri.path == '&{db.password}' &&& }",
        ],
        ['$.pattern', expect.stringContaining(compiles), "${matches(request.uri.path, '&{db.password}(')}"],
        ['$.target', expect.stringContaining(compiles), '${attributes[&{db.password}}'],
        ['$.count', "the setting evaluated to null (${'&{db.password}' == '' ? 1 : null})", undefined],
      ]);
      // The ones that compile, parsed again: what they give.
      const parsed = parseConfig(
        s.object({ condition: condition(), converted: s.expression('any') }),
        resolveTokens(
          { condition: { expression: "${'&{db.password}' == ''}" }, converted: "${'&{db.password}' * 2}" },
          { env: { DB_PASSWORD: secret } },
        ),
        { logger: warned },
      );
      expect(value).toBeUndefined();
      expect((parsed.condition.expression as { text: string }).text).toBe("${'&{db.password}' == ''}");
      expect(parsed.converted.evaluate({})).toBeNull();
      expect(
        warned.records.map((r) => [r.message, r.data?.text ?? r.data?.expression, r.data?.problem]),
      ).toEqual([
        ['a name is no name an expression knows here: it evaluates to null', '${&{db.password}}', undefined],
        ['a name is no name an expression knows here: it evaluates to null', '${&{db.password}}', undefined],
        [
          'expression evaluated to null',
          "${'&{db.password}' * 2}",
          'cannot convert a value (14 characters, not shown) to a number',
        ],
      ]);
      expect(JSON.stringify([errors, warned.records])).not.toContain('hunter2');
    });

    it('in the warnings of its evaluation', () => {
      const warned = createMemoryLogger();
      const { errors } = checkConfig(
        clientSettings,
        { name: 'x', connections: "${env['PORTICO_SCHEMA_SECRET'] * 2}" },
        { file: 'routes/10-db.json', logger: warned },
      );
      expect(warned.records).toEqual([
        expect.objectContaining({
          message: 'expression evaluated to null',
          data: expect.objectContaining({
            jsonPath: '$.connections',
            problem: 'cannot convert a value (14 characters, not shown) to a number',
          }),
        }),
      ]);
      expect(errors).toEqual([]);
      expect(JSON.stringify(warned.records)).not.toContain('hunter2');
    });
  });

  it('run-time expressions are compiled, not evaluated', () => {
    const parsed = parseConfig(
      clientSettings,
      { name: 'x', condition: "${request.method == 'GET'}" },
      { logger },
    );
    expect(parsed.condition?.evaluate({ request: { method: 'GET' } })).toBe(true);
    expect(parsed.condition?.evaluate({ request: { method: 'PUT' } })).toBe(false);
  });
});

describe('validation', () => {
  it('applies defaults and leaves optional settings out', () => {
    const parsed = parseConfig(clientSettings, { name: 'x' }, { logger });
    expect(parsed).toMatchObject({ name: 'x', connections: 64, secure: false, mode: 'REQUEST' });
    expect(parsed.soTimeout.equals(Duration.parse('10s'))).toBe(true);
    expect('tags' in parsed).toBe(false);
  });

  it('reports every problem, not just the first', () => {
    const { errors } = checkConfig(
      clientSettings,
      {
        connections: 0,
        secure: 'maybe',
        soTimeout: '5 fortnights',
        mode: 'SIDEWAYS',
        tags: ['a', 3, {}],
        extra: 1,
      },
      { logger },
    );
    expect(errors.map((e) => e.details.jsonPath).sort()).toEqual(
      [
        '$.connections',
        '$.extra',
        '$.mode',
        '$.name',
        '$.secure',
        '$.soTimeout',
        '$.tags[1]',
        '$.tags[2]',
      ].sort(),
    );
    expect(errors.every((e) => e.code === 'PORTICO_E_CONFIG' && e.details.expected)).toBe(true);
  });

  it('names unknown keys and lists the known ones', () => {
    const { errors } = checkConfig(s.object({ a: s.string() }), { a: 'x', 'odd key': 1 }, { logger });
    expect(errors[0]).toMatchObject({ details: { jsonPath: '$["odd key"]', expected: 'one of a' } });
  });

  it('parseConfig throws the first problem and carries all of them', () => {
    let error: unknown;
    try {
      parseConfig(clientSettings, { connections: 'x' }, { logger });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'PORTICO_E_CONFIG' });
    expect((error as { details: { cause: unknown[] } }).details.cause).toHaveLength(2);
  });

  it('accepts enumerations in any case and numbers written as text', () => {
    const parsed = parseConfig(clientSettings, { name: 'x', mode: 'response', connections: '8' }, { logger });
    expect(parsed).toMatchObject({ mode: 'RESPONSE', connections: 8 });
  });

  it('refuses a number or a boolean written where text is expected, and takes an expression of one as text', () => {
    const schema = s.object({ prefix: s.string(), flag: s.string(), port: s.string() });
    const { errors } = checkConfig(schema, { prefix: 5, flag: true, port: '${8000 + 80}' }, { logger });
    expect(errors.map((e) => e.toString())).toEqual([
      'PORTICO_E_CONFIG $.prefix: 5 is not a string (expected a string)',
      'PORTICO_E_CONFIG $.flag: true is not a string (expected a string)',
    ]);
    expect(parseConfig(schema, { prefix: '5', flag: '${1 == 1}', port: '${8000 + 80}' }, { logger })).toEqual(
      {
        prefix: '5',
        flag: 'true',
        port: '8080',
      },
    );
  });

  it('maps and nested objects carry their paths', () => {
    const schema = s.object({ headers: s.map(s.array(s.string())), inner: s.object({ n: s.integer() }) });
    const { errors } = checkConfig(
      schema,
      { headers: { 'X-A': ['1'], 'X-B': 'no' }, inner: { n: 1.5 } },
      { logger },
    );
    expect(errors.map((e) => e.details.jsonPath)).toEqual(['$.headers["X-B"]', '$.inner.n']);
  });

  it('describes itself as a JSON Schema', () => {
    const expression = { type: 'string', pattern: '[$#&]\\{' };
    expect(clientSettings.jsonSchema()).toMatchObject({
      type: 'object',
      required: ['name'],
      additionalProperties: false,
      // Comments: `_comment`, or a setting switched off as `_keyManager`.
      patternProperties: { '^_': {}, '^\\$schema$': {} },
      properties: {
        connections: {
          anyOf: [{ type: 'integer', minimum: 1 }, { type: 'string' }, expression],
          default: 64,
        },
        secure: {
          anyOf: [
            { type: 'boolean' },
            { pattern: '^(?:[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])$' },
            expression,
          ],
        },
        // No `format: 'duration'`: JSON Schema's is ISO 8601.
        soTimeout: { type: 'string', examples: ['10 seconds', '500 ms', 'unlimited'], default: '10 seconds' },
        mode: { anyOf: [{ enum: ['REQUEST', 'RESPONSE'] }, { type: 'string' }, expression] },
        condition: { type: ['string', 'number', 'boolean'] },
      },
    });
    expect(clientSettings.jsonSchema().properties).not.toHaveProperty('soTimeout.format');
  });

  it('reads `$schema` as a comment, as it reads keys starting with `_`', () => {
    const schema = s.object({ a: s.string() });
    const file = { $schema: './schemas/route.schema.json', _note: 'x', a: 'y' };
    expect(checkConfig(schema, file, { logger }).errors).toEqual([]);
    expect(
      checkConfig(schema, { ...file, $schemas: 'z' }, { logger }).errors.map((e) => e.details.jsonPath),
    ).toEqual(['$.$schemas']);
  });

  it('accepts as text what a scalar setting converts: numbers, any-case booleans and names', () => {
    const [, numberText] = (s.integer().jsonSchema().anyOf as { pattern?: string }[]).map((a) => a.pattern);
    expect(['8080', ' -1.5 '].every((text) => new RegExp(numberText!).test(text))).toBe(true);
    expect(new RegExp(numberText!).test('80a')).toBe(false);
    const [, names] = (s.enumOf(['LAX', 'STRICT']).jsonSchema().anyOf as { pattern?: string }[]).map(
      (a) => a.pattern,
    );
    expect(['lax', 'Strict', 'LAX'].map((text) => new RegExp(names!).test(text))).toEqual([true, true, true]);
    expect(new RegExp(names!).test('laxer')).toBe(false);
    // Validators compile patterns with the u flag, which refuses needless escapes (`\-`).
    const signs = s.enumOf(['RSA-OAEP', 'ECDH-ES+A128KW']).jsonSchema().anyOf as { pattern?: string }[];
    expect(new RegExp(signs[1]!.pattern!, 'u').test('rsa-oaep')).toBe(true);
  });

  it('marks a reference with what it may name, for a document of declarations to fill in', () => {
    expect(s.ref('filter').jsonSchema()).toMatchObject({
      anyOf: [{ type: 'string' }, { type: 'object', required: ['type'] }],
      'x-portico-reference': { kind: 'filter' },
    });
    expect(s.ref('handler', ['Router']).jsonSchema()).toMatchObject({
      'x-portico-reference': { kind: 'handler', types: ['Router'] },
    });
  });
});

describe('refine', () => {
  const rate = s.object({ a: s.integer().optional(), b: s.integer().optional() }).refine(
    (v) => ((v.a === undefined) === (v.b === undefined) ? 'exactly one of a and b is required' : undefined),
    'exactly one of a and b',
    (v) => (v.a !== undefined ? 'b' : undefined),
  );

  it('accepts what the check accepts, and keeps optional and default working', () => {
    expect(parseConfig(rate, { a: 1 })).toEqual({ a: 1 });
    expect(parseConfig(s.object({ r: rate.optional() }), {})).toEqual({});
  });

  it('reports what the check refuses, at the child it names', () => {
    const { errors } = checkConfig(rate, { a: 1, b: 2 }, { file: 'f.json' });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      code: 'PORTICO_E_CONFIG',
      message: 'exactly one of a and b is required',
      details: { file: 'f.json', jsonPath: '$.b', expected: 'exactly one of a and b' },
    });
    expect(checkConfig(rate, {}).errors[0]?.details.jsonPath).toBe('$');
  });

  it('does not run the check on a value that already failed', () => {
    const { errors } = checkConfig(rate, { a: 'x' });
    expect(errors.map((e) => e.details.jsonPath)).toEqual(['$.a']);
  });
});

describe('run-time expressions and the heap properties', () => {
  it("reads the heap's properties per request, unless the request's bindings have the name", () => {
    const schema = s.object({ uri: s.expression('string') });
    const { uri } = parseConfig(
      schema,
      { uri: '${frConfigs.amUrl}/json/${attributes.realm}' },
      {
        properties: { frConfigs: { amUrl: 'https://am.example' } },
      },
    );
    expect(uri.evaluate({ attributes: { realm: 'alpha' } })).toBe('https://am.example/json/alpha');
    expect(uri.evaluate({ frConfigs: { amUrl: 'https://other' }, attributes: {} })).toBe(
      'https://other/json/',
    );
  });

  it('leaves names that are neither bound nor properties null', () => {
    const { value } = parseConfig(s.object({ value: s.expression('any') }), { value: '${missing}' });
    expect(value.evaluate({})).toBeNull();
  });
});
