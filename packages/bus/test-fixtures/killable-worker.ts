import { ServiceWorker } from '../src/service-worker';
import { createTestHandlers, testOps } from './test-ops';

/**
 * A ServiceWorker in its own process, for the killed-worker test. Run with
 * `node -r ./ts-register.js killable-worker.ts`; configured by environment:
 * REDIS_URL, BUS_PREFIX, LOCK_MS, STALLED_MS, BUS_HANDOFF. Prints `READY` once taking jobs
 * and `HANDLING <jobId>` when a `slow` or `mutate` job starts, so the test can SIGKILL it
 * mid-job.
 */
const { handlers } = createTestHandlers();
const worker = new ServiceWorker({
  service: 'run',
  catalog: testOps,
  handlers: {
    ...handlers,
    slow: async (payload, ctx) => {
      process.stdout.write(`HANDLING ${ctx.jobId}\n`);
      return handlers.slow(payload, ctx);
    },
    mutate: async (payload, ctx) => {
      process.stdout.write(`HANDLING ${ctx.jobId}\n`);
      return handlers.mutate(payload, ctx);
    },
  },
  redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  prefix: process.env.BUS_PREFIX ?? 'dagu',
  lockDurationMs: Number(process.env.LOCK_MS ?? 1000),
  stalledIntervalMs: Number(process.env.STALLED_MS ?? 500),
  handoff: process.env.BUS_HANDOFF !== 'false',
});

worker.start().then(
  () => process.stdout.write('READY\n'),
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  },
);
process.on('SIGTERM', () => {
  void worker.close().then(() => process.exit(0));
});
