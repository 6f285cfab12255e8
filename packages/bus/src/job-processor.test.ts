import { type BusRequest } from '@dagu-mcp/contracts';
import { type BusLogger } from './bus-logger';
import { processBusJob, type JobInput } from './job-processor';
import { createTestHandlers, testOps } from '../test-fixtures/test-ops';
import { TEST_PRINCIPAL } from '../test-fixtures/bus-test-env';

function job(
  op: string,
  payload: unknown,
  overrides: Partial<BusRequest> = {},
  attempts = { made: 0, max: 1, stalled: 0 },
): JobInput {
  const request: BusRequest = {
    op,
    payload,
    principal: TEST_PRINCIPAL,
    deadline: Date.now() + 5000,
    traceContext: {},
    replyTo: 'dagu:reply:c1',
    ...overrides,
  };
  return {
    data: request,
    jobId: 'job-1',
    attemptsMade: attempts.made,
    maxAttempts: attempts.max,
    stalledCount: attempts.stalled,
  };
}

/** A logger that keeps its lines, to assert what was logged. */
function recordingLogger(): BusLogger & {
  lines: { level: string; fields: Record<string, unknown>; message: string }[];
} {
  const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  const at = (level: string) => (fields: Record<string, unknown>, message: string) =>
    void lines.push({ level, fields, message });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

async function run(input: JobInput) {
  const { handlers, log } = createTestHandlers();
  const logger = recordingLogger();
  return { outcome: await processBusJob(testOps, handlers, input, logger), log, lines: logger.lines };
}

describe('processBusJob', () => {
  it('replies with the handler result', async () => {
    const { outcome } = await run(job('echo', { text: 'hi' }));
    expect(outcome).toMatchObject({
      kind: 'reply',
      replyTo: 'dagu:reply:c1',
      failJob: false,
      reply: { ok: true, data: { text: 'hi', principalId: 'user-1' } },
    });
  });

  it('drops a job past its deadline without running the handler', async () => {
    const { outcome, log, lines } = await run(job('mutate', { key: 'k' }, { deadline: Date.now() - 1 }));
    expect(outcome).toEqual({ kind: 'drop', reason: 'deadline_passed' });
    expect(lines.map((line) => line.message)).toEqual(['bus job dropped past its deadline']);
    expect(log.handled).toEqual([]);
  });

  it('drops an envelope it cannot reply to, and answers one it can with internal_error', async () => {
    expect((await run({ data: 'junk', jobId: 'j', attemptsMade: 0, maxAttempts: 1 })).outcome).toEqual({
      kind: 'drop',
      reason: 'malformed_request',
    });
    const { outcome } = await run({ data: { replyTo: 'r', op: 'echo' }, jobId: 'j', attemptsMade: 0, maxAttempts: 1 });
    expect(outcome).toMatchObject({
      kind: 'reply',
      replyTo: 'r',
      failJob: true,
      reply: { ok: false, error: { code: 'internal_error' } },
    });
  });

  it.each(['nope', 'constructor', 'toString'])('answers the unknown op %p with internal_error', async (op) => {
    const { outcome } = await run(job(op, {}));
    expect(outcome).toMatchObject({
      kind: 'reply',
      failJob: true,
      reply: { ok: false, error: { code: 'internal_error' } },
    });
  });

  it('answers a payload failing its schema with invalid_tool_input and the field', async () => {
    const { outcome, log } = await run(job('echo', { text: 7 }));
    expect(outcome).toMatchObject({
      kind: 'reply',
      failJob: false,
      reply: { ok: false, error: { code: 'invalid_tool_input', field: 'text' } },
    });
    expect(log.handled).toEqual([]);
  });

  it("passes a handler's DaguError through as a user error", async () => {
    const { outcome } = await run(job('fail', { code: 'conflict', message: 'Exists.', field: 'name' }));
    expect(outcome).toMatchObject({
      kind: 'reply',
      failJob: false,
      reply: { ok: false, error: { code: 'conflict', message: 'Exists.', field: 'name' } },
    });
  });

  it('hides an unexpected exception behind internal_error, and logs it', async () => {
    const { outcome, lines } = await run(job('crash', {}));
    expect(lines).toContainEqual({
      level: 'error',
      fields: expect.objectContaining({
        jobId: 'job-1',
        op: 'crash',
        error: expect.objectContaining({ message: 'secret stack detail' }),
      }),
      message: 'bus handler threw an unexpected error',
    });
    expect(outcome).toEqual({
      kind: 'reply',
      replyTo: 'dagu:reply:c1',
      deadline: expect.any(Number),
      failJob: true,
      reply: { ok: false, error: { code: 'internal_error', message: 'Internal error.' } },
    });
  });

  it('answers internal_error when the reply fails its schema', async () => {
    const { outcome } = await run(job('badReply', {}));
    expect(outcome).toMatchObject({
      kind: 'reply',
      failJob: true,
      reply: { ok: false, error: { code: 'internal_error' } },
    });
  });

  it('retries a transient error while attempts are left, then answers it', async () => {
    const first = await run(job('flaky', { key: 'k', failTimes: 9 }, {}, { made: 0, max: 3, stalled: 0 }));
    expect(first.outcome).toMatchObject({ kind: 'retry', error: { code: 'resource_unavailable' } });
    const last = await run(job('flaky', { key: 'k', failTimes: 9 }, {}, { made: 2, max: 3, stalled: 0 }));
    expect(last.outcome).toMatchObject({
      kind: 'reply',
      failJob: true,
      reply: { ok: false, error: { code: 'resource_unavailable' } },
    });
  });

  it('a mutation that reaches its deadline mid-way is not applied and not retried', async () => {
    const { outcome, log } = await run(
      job('mutate', { key: 'k', delayMs: 80 }, { deadline: Date.now() + 30 }, { made: 0, max: 3, stalled: 0 }),
    );
    expect(outcome).toMatchObject({ kind: 'reply', reply: { ok: false, error: { code: 'resource_unavailable' } } });
    expect(log.applied).toEqual([]);
  });

  it('never retries a transient failure of a mutation, even with attempts left: it is answered and the job failed', async () => {
    const { outcome, log } = await run(
      job('flakyMutation', { key: 'm', failTimes: 1 }, {}, { made: 0, max: 3, stalled: 0 }),
    );
    expect(outcome).toMatchObject({
      kind: 'reply',
      failJob: true,
      reply: { ok: false, error: { code: 'resource_unavailable', message: 'Database is down.' } },
    });
    expect(log.attempts.get('m')).toBe(1);
  });

  it('does not run again a mutation its stopped replica may have applied: outcome unknown (dagu-model §10)', async () => {
    const { outcome, log, lines } = await run(job('mutate', { key: 'k' }, {}, { made: 0, max: 1, stalled: 1 }));
    expect(outcome).toMatchObject({
      kind: 'reply',
      failJob: true,
      reply: { ok: false, error: { code: 'resource_unavailable', details: { outcome: 'unknown' } } },
    });
    expect(log.handled).toEqual([]);
    expect(lines.map((line) => line.message)).toEqual(['bus mutation not run again after its replica stopped']);
  });

  it('runs again a read its stopped replica did not finish', async () => {
    const { outcome, log } = await run(job('echo', { text: 'again' }, {}, { made: 0, max: 1, stalled: 1 }));
    expect(outcome).toMatchObject({ kind: 'reply', failJob: false, reply: { ok: true } });
    expect(log.handled).toEqual(['echo']);
  });

  it('names the gateway request in the one log line of an unexpected failure, with the stack', async () => {
    const { lines } = await run(job('crash', {}, { requestId: 'req-42' }));
    const errors = lines.filter((line) => line.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]?.fields).toMatchObject({ requestId: 'req-42', jobId: 'job-1', op: 'crash' });
    expect(errors[0]?.fields.error).toMatchObject({ stack: expect.stringContaining('Error: secret stack detail') });
  });
});
