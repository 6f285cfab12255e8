import { DaguError } from '@dagu-mcp/contracts';
import { resolvedOutcome, shouldResolveOutcome } from './mutation-outcome';
import { payloadHashOf } from './payload-hash';

const timedOut = new DaguError('resource_unavailable', 'dag-service did not answer within 10000 ms.', {
  details: { service: 'dag-service', timeoutMs: 10000 },
});

describe('shouldResolveOutcome', () => {
  it('resolves a missed deadline and a replica that stopped mid-way, nothing else', () => {
    expect(shouldResolveOutcome(timedOut)).toBe(true);
    expect(shouldResolveOutcome({ code: 'resource_unavailable', details: { outcome: 'unknown' } })).toBe(true);
    expect(shouldResolveOutcome({ code: 'resource_unavailable' })).toBe(false); // Redis down: nothing was sent
    expect(shouldResolveOutcome({ code: 'conflict', details: { timeoutMs: 1 } })).toBe(false);
  });
});

describe('resolvedOutcome (dagu-model §10: "unknown" only when it cannot be told)', () => {
  it('applied with a recorded reply: that reply, as if it had come in time', () => {
    expect(resolvedOutcome('dag.upsert', timedOut, { applied: true, result: { version: 3 } })).toEqual({
      ok: true,
      data: { version: 3 },
    });
  });

  it('applied without a reply: resource_unavailable saying applied', () => {
    const reply = resolvedOutcome('dag.upsert', timedOut, { applied: true });
    expect(reply).toMatchObject({
      ok: false,
      error: { code: 'resource_unavailable', details: { outcome: 'applied', timeoutMs: 10000 } },
    });
  });

  it('not applied: says so, and that sending again is safe', () => {
    const reply = resolvedOutcome('dag.upsert', timedOut, { applied: false });
    expect(reply).toMatchObject({ ok: false, error: { details: { outcome: 'not_applied' } } });
    expect(reply.ok ? '' : reply.error.message).toContain('not applied');
  });

  it('no answer from the service: unknown', () => {
    expect(resolvedOutcome('dag.upsert', timedOut, undefined)).toMatchObject({
      ok: false,
      error: { code: 'resource_unavailable', details: { outcome: 'unknown' } },
    });
  });
});

describe('payloadHashOf', () => {
  it('is the same whatever the key order, and differs with the op or a value', () => {
    const a = payloadHashOf('run.start', { dagName: 'x', params: { b: 1, a: [1, { d: 2, c: 3 }] } });
    const b = payloadHashOf('run.start', { params: { a: [1, { c: 3, d: 2 }], b: 1 }, dagName: 'x' });
    expect(a).toBe(b);
    expect(payloadHashOf('run.retry', { dagName: 'x', params: { b: 1, a: [1, { d: 2, c: 3 }] } })).not.toBe(a);
    expect(payloadHashOf('run.start', { dagName: 'y', params: { b: 1, a: [1, { d: 2, c: 3 }] } })).not.toBe(a);
    expect(payloadHashOf('run.start', { dagName: 'x', extra: undefined })).toBe(
      payloadHashOf('run.start', { dagName: 'x' }),
    );
  });
});
