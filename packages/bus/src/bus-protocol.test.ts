import { z } from 'zod';
import { fieldOfZodError, invalidInputError } from './bus-errors';
import {
  decodeReplyMessage,
  encodeReplyMessage,
  jobOptionsFor,
  attemptsOf,
  queueNameOf,
  replyChannelOf,
  resolveTimeoutMs,
} from './bus-protocol';
import { reconnectDelayMs } from './redis-connection';

describe('bus protocol', () => {
  it('names queues after the contracts and reply channels after the client', () => {
    expect(queueNameOf('dag')).toBe('dag-service');
    expect(replyChannelOf('dagu', 'c1')).toBe('dagu:reply:c1');
  });

  it.each([
    [undefined, undefined, 10_000, 10_000],
    [undefined, 3000, 10_000, 3000],
    [500, 3000, 10_000, 500],
  ])('timeout: call %p, op %p, default %p → %p ms', (call, op, fallback, expected) => {
    expect(resolveTimeoutMs(call, op, fallback)).toBe(expected);
  });

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY])('rejects the timeout %p', (bad) => {
    expect(() => resolveTimeoutMs(bad, undefined, 10_000)).toThrow(RangeError);
  });

  it('job options: one attempt by default, backoff only when retrying', () => {
    expect(jobOptionsFor('j', undefined)).toEqual({
      jobId: 'j',
      removeOnComplete: true,
      removeOnFail: { count: 1000 },
      attempts: 1,
    });
    expect(jobOptionsFor('j', 3)).toMatchObject({ attempts: 3, backoff: { type: 'exponential', delay: 100 } });
  });

  it('job options: a payload that carries a secret keeps no failed job (docs/decisions.md "Workbook reads")', () => {
    expect(jobOptionsFor('j', undefined, true)).toEqual({
      jobId: 'j',
      removeOnComplete: true,
      removeOnFail: true,
      attempts: 1,
    });
  });

  it.each([
    [{ mutation: false }, 1],
    [{ mutation: false, attempts: 3 }, 3],
    [{ mutation: false, attempts: 2.7 }, 2],
    [{ mutation: false, attempts: 0 }, 1],
    [{ mutation: true }, 1],
    [{ mutation: true, attempts: 3 }, 1],
  ])('attempts of %p: %p (a mutation is never retried)', (op, attempts) => {
    expect(attemptsOf(op)).toBe(attempts);
  });

  it('round-trips a reply message and rejects garbage', () => {
    const ok = encodeReplyMessage('j1', { ok: true, data: { a: 1 } });
    expect(decodeReplyMessage(ok)).toEqual({ id: 'j1', reply: { ok: true, data: { a: 1 } } });
    const failed = encodeReplyMessage('j2', { ok: false, error: { code: 'conflict', message: 'm', field: 'f' } });
    expect(decodeReplyMessage(failed)?.reply).toEqual({
      ok: false,
      error: { code: 'conflict', message: 'm', field: 'f' },
    });
    expect(decodeReplyMessage('not json')).toBeUndefined();
    expect(decodeReplyMessage('{"id":"x"}')).toBeUndefined();
    expect(decodeReplyMessage('{"id":"x","reply":{"ok":false,"error":{"code":"nope","message":""}}}')).toBeUndefined();
  });

  it('reconnects with a capped exponential backoff', () => {
    expect([1, 2, 3, 4, 5, 6, 100].map((attempt) => reconnectDelayMs(attempt))).toEqual([
      50, 100, 200, 400, 800, 1000, 1000,
    ]);
    expect(reconnectDelayMs(3, 120)).toBe(120);
  });
});

describe('validation errors', () => {
  const schema = z.object({ items: z.array(z.object({ name: z.string() })) });

  it('names the field of the first issue with a dotted path', () => {
    const result = schema.safeParse({ items: [{ name: 'a' }, { name: 3 }] });
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(fieldOfZodError(result.error)).toBe('items.1.name');
    const error = invalidInputError('dag.create', result.error);
    expect(error).toMatchObject({ code: 'invalid_tool_input', field: 'items.1.name' });
    expect(error.message).toMatch(/^Invalid input for dag\.create: /);
    expect(error.details).toEqual({ issues: [{ path: ['items', 1, 'name'], message: expect.any(String) }] });
  });

  it('says an absent field is required, naming it', () => {
    const payload = { items: [{ name: 'a' }, {}] };
    const result = schema.safeParse(payload);
    expect(result.success).toBe(false);
    if (result.success) return;
    const error = invalidInputError('dag.create', result.error, payload);
    expect(error.message).toBe('Invalid input for dag.create: items.1.name is required');
    expect(error.field).toBe('items.1.name');
  });

  it('has no field for an issue on the whole value', () => {
    const result = schema.safeParse('nope');
    expect(result.success).toBe(false);
    if (!result.success) expect(fieldOfZodError(result.error)).toBeUndefined();
  });
});
