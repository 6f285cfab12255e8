import { DaguError } from '@dagu-mcp/contracts';
import { SILENT_LOGGER } from './bus-logger';
import { createHandlerContext, type HandlerMap } from './handler-context';
import { testOps, type TestOps } from '../test-fixtures/test-ops';
import { TEST_PRINCIPAL } from '../test-fixtures/bus-test-env';

function contextFor(deadline: number) {
  return createHandlerContext({
    principal: TEST_PRINCIPAL,
    deadline,
    op: 'mutate',
    jobId: 'j1',
    traceContext: {},
    logger: SILENT_LOGGER,
  });
}

describe('createHandlerContext', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('counts down to the deadline and aborts its signal there', () => {
    const { context, dispose } = contextFor(1_000_500);
    expect(context.remainingMs()).toBe(500);
    expect(() => context.assertBeforeDeadline()).not.toThrow();
    jest.advanceTimersByTime(499);
    expect(context.signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(context.signal.aborted).toBe(true);
    expect(context.signal.reason).toBeInstanceOf(DaguError);
    expect(context.remainingMs()).toBe(0);
    expect(() => context.assertBeforeDeadline()).toThrow(expect.objectContaining({ code: 'resource_unavailable' }));
    dispose();
  });

  it('arms no timer until the signal is read, and dispose clears it', () => {
    const { context, dispose } = contextFor(1_000_500);
    expect(jest.getTimerCount()).toBe(0);
    expect(context.signal.aborted).toBe(false);
    expect(jest.getTimerCount()).toBe(1);
    dispose();
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(1000);
    expect(context.signal.aborted).toBe(false);
  });

  it('is aborted from the start when the deadline already passed', () => {
    const { context } = contextFor(999_000);
    expect(context.signal.aborted).toBe(true);
    expect(jest.getTimerCount()).toBe(0);
  });
});

describe('HandlerMap typing (checked by tsconfig.check.json, npm run typecheck)', () => {
  it('requires a handler for every op and types payload and reply', () => {
    // @ts-expect-error -- `echo` and the other handlers are missing
    const missing: HandlerMap<TestOps> = { crash: async () => ({}) };
    const wrongReply: Pick<HandlerMap<TestOps>, 'echo'> = {
      // @ts-expect-error -- the reply lacks `principalId`
      echo: async (payload) => ({ text: payload.text }),
    };
    const typedPayload: Pick<HandlerMap<TestOps>, 'mutate'> = {
      // `delayMs` has a default, so the handler sees it as a number (schema output).
      mutate: async (payload) => (payload.delayMs.toFixed() ? { applied: true } : { applied: true }),
    };
    expect([missing, wrongReply, typedPayload, testOps]).toHaveLength(4);
  });
});
