import { DaguError, defineOps, ErrorCodeSchema } from '@dagu-mcp/contracts';
import { z } from 'zod';
import { type HandlerMap } from '../src/handler-context';

/**
 * The op catalog the bus tests run against, one op per behaviour under test.
 * `mutate` is mutation-style: it sleeps, then calls `assertBeforeDeadline()`
 * right before it "commits" (records its key), as real mutations must.
 */
export const testOps = defineOps({
  echo: {
    request: z.object({ text: z.string().min(1) }),
    reply: z.object({ text: z.string(), principalId: z.string() }),
    mutation: false,
  },
  fail: {
    request: z.object({ code: ErrorCodeSchema, message: z.string(), field: z.string().optional() }),
    reply: z.object({}),
    mutation: false,
  },
  crash: { request: z.object({}), reply: z.object({}), mutation: false },
  badReply: { request: z.object({}), reply: z.object({ count: z.number().int() }), mutation: false },
  slow: {
    request: z.object({ ms: z.number().int().nonnegative() }),
    reply: z.object({ sleptMs: z.number() }),
    mutation: false,
  },
  mutate: {
    request: z.object({ key: z.string().min(1), delayMs: z.number().int().nonnegative().default(0) }),
    reply: z.object({ applied: z.literal(true) }),
    mutation: true,
  },
  flaky: {
    request: z.object({ key: z.string().min(1), failTimes: z.number().int().nonnegative() }),
    reply: z.object({ attempt: z.number().int() }),
    mutation: false,
    attempts: 3,
  },
  /** A mutation that declares attempts: the bus must ignore them (a mutation is never retried automatically). */
  flakyMutation: {
    request: z.object({ key: z.string().min(1), failTimes: z.number().int().nonnegative() }),
    reply: z.object({ attempt: z.number().int() }),
    mutation: true,
    attempts: 3,
  },
});
export type TestOps = typeof testOps;

/** What the test handlers observed: every op run, mutations applied, attempts per flaky key. */
export interface TestHandlerLog {
  handled: string[];
  applied: string[];
  attempts: Map<string, number>;
}

/** Sleeps `ms`, or rejects as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    });
  });
}

/** Handlers for {@link testOps} that record what they did in the returned log. */
export function createTestHandlers(): { handlers: HandlerMap<TestOps>; log: TestHandlerLog } {
  const log: TestHandlerLog = { handled: [], applied: [], attempts: new Map() };
  const handlers: HandlerMap<TestOps> = {
    echo: async (payload, ctx) => {
      log.handled.push('echo');
      return { text: payload.text, principalId: ctx.principal.id };
    },
    fail: async (payload) => {
      log.handled.push('fail');
      throw new DaguError(payload.code, payload.message, payload.field !== undefined ? { field: payload.field } : {});
    },
    crash: async () => {
      log.handled.push('crash');
      throw new Error('secret stack detail');
    },
    badReply: async () => {
      log.handled.push('badReply');
      return { count: 1.5 };
    },
    slow: async (payload) => {
      log.handled.push('slow');
      await sleep(payload.ms);
      return { sleptMs: payload.ms };
    },
    mutate: async (payload, ctx) => {
      log.handled.push('mutate');
      await sleep(payload.delayMs);
      ctx.assertBeforeDeadline();
      log.applied.push(payload.key);
      return { applied: true };
    },
    flaky: async (payload) => {
      const attempt = (log.attempts.get(payload.key) ?? 0) + 1;
      log.attempts.set(payload.key, attempt);
      log.handled.push('flaky');
      if (attempt <= payload.failTimes) throw new DaguError('resource_unavailable', 'Database is down.');
      return { attempt };
    },
    flakyMutation: async (payload) => {
      const attempt = (log.attempts.get(payload.key) ?? 0) + 1;
      log.attempts.set(payload.key, attempt);
      log.handled.push('flakyMutation');
      if (attempt <= payload.failTimes) throw new DaguError('resource_unavailable', 'Database is down.');
      log.applied.push(payload.key);
      return { attempt };
    },
  };
  return { handlers, log };
}
