/** Which message a rule's expressions are read against. */
export type RuleMessage = 'request' | 'response';

/**
 * The rules a filter applies on the way in (`onRequest`, before the request goes on) and on the way
 * back (`onResponse`, once the response is back), as AssignmentFilter and SwitchFilter declare them,
 * with the bodies they read. A body a rule reads must be buffered before anything consumes it: the
 * request's before the request goes on (an `onResponse` rule reading it would come too late), the
 * response's before the `onResponse` rules run.
 */
export class MessageRules<Rule> {
  readonly onRequest: readonly Rule[];
  readonly onResponse: readonly Rule[];
  readonly readsRequestBody: boolean;
  readonly readsResponseBody: boolean;

  constructor(
    onRequest: readonly Rule[],
    onResponse: readonly Rule[],
    reads: (rule: Rule, message: RuleMessage) => boolean,
  ) {
    this.onRequest = onRequest;
    this.onResponse = onResponse;
    this.readsRequestBody = [...onRequest, ...onResponse].some((rule) => reads(rule, 'request'));
    this.readsResponseBody = onResponse.some((rule) => reads(rule, 'response'));
  }
}
