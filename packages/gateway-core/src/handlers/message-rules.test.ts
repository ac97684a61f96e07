import { describe, expect, it } from 'vitest';
import type { Condition } from '../config/condition-schema.ts';
import { compile } from '../expression/expression.ts';
import { conditionReadsEntity } from './conditions.ts';
import { MessageRules } from './message-rules.ts';

const when = (text: string): Condition => ({ label: undefined, expression: compile(text, 'boolean') });

describe('conditionReadsEntity', () => {
  it("is true only for the message whose body the condition's expression reads", () => {
    const condition = when("${response.entity.json['valid']}");
    expect(conditionReadsEntity(condition, 'response')).toBe(true);
    expect(conditionReadsEntity(condition, 'request')).toBe(false);
    expect(conditionReadsEntity(when("${request.form['user'][0] == 'a'}"), 'request')).toBe(true);
  });

  it('is false for no condition, a constant, and an expression reading no body', () => {
    expect(conditionReadsEntity(undefined, 'request')).toBe(false);
    expect(conditionReadsEntity({ label: undefined, expression: true }, 'request')).toBe(false);
    expect(conditionReadsEntity(when("${request.method == 'POST'}"), 'request')).toBe(false);
  });
});

describe('MessageRules', () => {
  const rules = (onRequest: string[], onResponse: string[]) =>
    new MessageRules(onRequest.map(when), onResponse.map(when), conditionReadsEntity);

  it('keeps the rules of each way in their order', () => {
    const made = rules(['${true}', '${false}'], ['${1 == 1}']);
    expect(made.onRequest.map((c) => (c.expression as { text: string }).text)).toEqual([
      '${true}',
      '${false}',
    ]);
    expect(made.onResponse).toHaveLength(1);
  });

  it('buffers nothing when no rule reads a body', () => {
    const made = rules(["${request.method == 'GET'}"], ['${response.status == 200}']);
    expect([made.readsRequestBody, made.readsResponseBody]).toEqual([false, false]);
  });

  it('buffers the request body when a rule of either way reads it', () => {
    expect(rules(["${request.entity.string == 'x'}"], []).readsRequestBody).toBe(true);
    // The request has gone on by the time the response comes back: its body must be kept before.
    const onResponse = rules([], ["${request.entity.string == 'x'}"]);
    expect([onResponse.readsRequestBody, onResponse.readsResponseBody]).toEqual([true, false]);
  });

  it('buffers the response body only for the onResponse rules', () => {
    expect(rules([], ['${response.entity.json.valid}']).readsResponseBody).toBe(true);
    // On the way in there is no response yet.
    expect(rules(['${response.entity.json.valid}'], []).readsResponseBody).toBe(false);
  });
});
