#!/usr/bin/env node
/**
 * What the uid per run (docs/security.md "A uid per run") costs a step: starts two built
 * stacks side by side, one with `RUN_STEP_UID_RANGE` (every step as its run's own uid, a
 * private `HOME`/`TMPDIR`, a process limit) and one without (steps as run-service's user),
 * runs a `type: chain` DAG of 50 `true` steps on each in turn, and prints per stack the
 * median steps span (first step start → last step end) divided by the steps, and the
 * median whole run (creation to end); the difference per step is the uid switch's cost, the
 * difference per run what preparing and removing a run's private directory adds.
 *
 *   node bench/step-uid-cost.mjs [rounds=8] [steps=50]
 *
 * Must run as root (the spawner switches uids). Needs a built tree, PostgreSQL and Redis
 * answering (DATABASE_URL, REDIS_URL).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startStack, createApiKey } from './lib/stack.mjs';
import { openSession, call, keepAliveAgent } from './lib/mcp-http.mjs';
import { applyDags } from './lib/dags.mjs';
import { engineDags, startCall, drainRuns, runTimeline } from './lib/engine.mjs';

const ROUNDS = Number(process.argv[2] ?? 8);
const STEPS = Number(process.argv[3] ?? 50);
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
if (process.getuid?.() !== 0) throw new Error('step-uid-cost switches uids: run it as root');

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const dirs = [];
const tempDir = (name) => {
  const dir = mkdtempSync(join(tmpdir(), `bench-uid-${name}-`));
  dirs.push(dir);
  return dir;
};

/** Starts one stack; `uids` switches the uid per run on. */
async function open(uids) {
  const extraEnv = {
    RUN_WORK_DIR: tempDir('work'),
    RUN_PRIVATE_DIR: tempDir('private'),
    ...(uids ? { RUN_STEP_UID_RANGE: '210000-219999', RUN_STEP_MAX_PROCESSES: '256' } : {}),
  };
  const stack = await startStack({ databaseUrl, redisUrl, extraEnv });
  const token = await createApiKey(stack);
  const agent = keepAliveAgent(1);
  const session = await openSession(stack.mcpUrl, { token, agent });
  await applyDags(stack.mcpUrl, session, token, engineDags({ chainSteps: STEPS, foreachItems: 2 }));
  let n = 0;
  /** Runs bench-chain once to its end; its timeline. */
  const runOnce = async () => {
    n += 1;
    const answer = await call(stack.mcpUrl, session, 'tools/call', startCall('bench-chain').params, {
      token,
      agent,
      id: n,
    });
    const id = answer?.structuredContent?.dagRunId;
    if (typeof id !== 'string') throw new Error(`start: ${JSON.stringify(answer).slice(0, 300)}`);
    const schema = stack.schemaOf('run-service');
    await drainRuns(databaseUrl, schema, 'bench-chain', [id], { pollMs: 5 });
    const timeline = await runTimeline(databaseUrl, schema, 'bench-chain', id);
    if (timeline.status !== 4 || timeline.steps !== STEPS) throw new Error(`run ${id}: ${JSON.stringify(timeline)}`);
    return timeline;
  };
  return { stack, runOnce, uids };
}

const stacks = [await open(false), await open(true)];
try {
  for (const s of stacks) await s.runOnce(); // warm-up
  const seen = new Map(stacks.map((s) => [s, { perStep: [], run: [] }]));
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const s of stacks) {
      const t = await s.runOnce();
      seen.get(s).perStep.push(t.stepsSpanMs / STEPS);
      seen.get(s).run.push(t.runMs);
    }
  }
  const rows = stacks.map((s) => ({
    steps: s.uids ? 'a uid per run (RUN_STEP_UID_RANGE)' : "run-service's user",
    perStepMs: Math.round(median(seen.get(s).perStep) * 100) / 100,
    runMs: Math.round(median(seen.get(s).run)),
  }));
  console.table(rows);
  console.log(
    JSON.stringify({
      rounds: ROUNDS,
      steps: STEPS,
      uidSwitchPerStepMs: Math.round((rows[1].perStepMs - rows[0].perStepMs) * 100) / 100,
      uidPerRunMs: rows[1].runMs - rows[0].runMs,
      rows,
    }),
  );
} finally {
  for (const s of stacks) await s.stack.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}
