import { lookupDataSource, type SqlDataSource } from '@portico/datasource-jdbc';
import {
  type Bindings,
  bindingsFor,
  type Context,
  defineHeaplet,
  ErrorCode,
  type Expression,
  evaluateSettled,
  type Filter,
  type Handler,
  LazyMap,
  type Logger,
  type LValueExpression,
  PorticoError,
  type Request,
  type Response,
  s,
} from '@portico/gateway-core';
import { FailureLog } from './failure-log.ts';

export interface SqlAttributesSettings {
  name: string;
  dataSource: SqlDataSource;
  /** The name the configuration gives the data source, for log records. */
  dataSourceName: string;
  preparedStatement: string;
  parameters: Expression<unknown>[];
  target: LValueExpression;
  logger: Logger;
}

/**
 * SqlAttributesFilter runs a prepared statement and sets its `target` to the first row of the
 * result, as a map of column label → value (an empty map when there is no row or the query fails).
 *
 * The lookup is lazy: the target receives a LazyMap whose loader evaluates the parameters, takes a
 * connection and runs the query on the first read of the target, which may be never (then no query
 * runs). Expressions read maps synchronously and the query is not: every evaluation site of the
 * gateway evaluates "settled" (core `evaluateSettled`), so the expression that first reads the target
 * starts the query, waits for the row without blocking the event loop, and is evaluated again with it.
 */
export class SqlAttributesFilter implements Filter {
  readonly #settings: SqlAttributesSettings;
  readonly #failures: FailureLog;

  constructor(settings: SqlAttributesSettings) {
    this.#settings = settings;
    this.#failures = new FailureLog(settings.logger);
  }

  filter(context: Context, request: Request, next: Handler): Promise<Response> {
    const bindings = bindingsFor(context, request);
    const row = new LazyMap(() => this.#firstRow(bindings, context.transactionId));
    this.#settings.target.assign(bindings, row);
    return next.handle(context, request);
  }

  /** Evaluates the parameters, runs the statement and gives its first row; never rejects. */
  async #firstRow(bindings: Bindings, transactionId: string): Promise<Record<string, unknown>> {
    const { dataSource, preparedStatement, parameters } = this.#settings;
    try {
      // Settled: a parameter may read another lookup's target, itself still loading.
      const values: unknown[] = [];
      for (const parameter of parameters) values.push(await evaluateSettled(parameter, bindings));
      const rows = await dataSource.query(preparedStatement, values);
      return rows[0] ?? {};
    } catch (error) {
      this.#failures.record({
        filter: this.#settings.name,
        dataSource: this.#settings.dataSourceName,
        transactionId,
        error: error instanceof Error ? error.message : String(error),
      });
      return {};
    }
  }
}

export const SqlAttributesFilterHeaplet = defineHeaplet({
  type: 'SqlAttributesFilter',
  kind: 'filter',
  config: s.object({
    // A name, not a reference: the incumbents look it up in the container's naming service.
    dataSource: s.string().refine((name) => (name.trim() === '' ? 'the name is empty' : undefined), 'a name'),
    preparedStatement: s
      .string()
      .refine((sql) => (sql.trim() === '' ? 'the statement is empty' : undefined), 'a SQL statement'),
    parameters: s.array(s.expression('any')).default([]),
    target: s.lvalue(),
  }),
  create: async ({ name, config, heap, logger, configAt }) => {
    const dataSource = await lookupDataSource(heap, config.dataSource, configAt('dataSource'));
    const placeholders = dataSource.placeholders(config.preparedStatement);
    if (placeholders !== config.parameters.length) {
      throw new PorticoError(
        ErrorCode.CONFIG,
        `the statement has ${placeholders} placeholder${placeholders === 1 ? '' : 's'} but ${config.parameters.length} parameter${config.parameters.length === 1 ? ' is' : 's are'} given`,
        { ...configAt('parameters'), expected: 'one parameter for each ? of preparedStatement' },
      );
    }
    return new SqlAttributesFilter({
      name,
      dataSource,
      dataSourceName: config.dataSource,
      preparedStatement: config.preparedStatement,
      parameters: config.parameters,
      target: config.target,
      logger,
    });
  },
});
