/**
 * Engine overhead per step (issue "Run engine core" target: < 5 ms per step
 * on top of the process spawn itself), measured on a 100-step chain of `true`.
 *
 * Run from the repo root (no build needed; PostgreSQL must be up, database
 * `test` unless TEST_DATABASE_URL says otherwise):
 *   node -r ./packages/bus/test-fixtures/ts-register.js apps/run-service/bench/chain.bench.ts [--steps 100] [--rounds 5] [--direct] [--state-write-ms 20]
 * or: cd apps/run-service && npm run bench:chain
 *
 * Measures:
 *  - baseline: `/bin/sh -c true` spawned --steps times in a row through the
 *    engine's own process runner and launcher (the step spawner process, or
 *    this process with `--direct`; detached group, piped output, line capture)
 *    with no database at all: the spawn cost a step cannot avoid;
 *  - the chain: a `type: chain` DAG of --steps `true` steps run by the engine
 *    (step states, scheduler log, log streams, environment, temp output file),
 *    from the first step's start to the last step's finish, and from the
 *    start request to the terminal status in PostgreSQL;
 *  - overhead per step = (chain span − baseline) / steps, per round; prints
 *    the median and best of --rounds; also each step's mean duration
 *    (start → finish, spawn included) and the mean gap between steps
 *    (finish → next start: the scheduling cost alone).
 */
import { stepEnvBase } from '../src/core/env-merge';
import { DIRECT_LAUNCHER, type StepLauncher } from '../src/core/step-launch';
import { ProcessSpawner } from '../src/process/spawner/process-spawner';
import { runProcess } from '../src/process/process-runner';
import { createRunTestEnv } from '../test-fixtures/run-test-env';

function argOf(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index >= 0 ? Number(process.argv[index + 1]) : NaN;
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

const STEPS = argOf('steps', 100);
const ROUNDS = argOf('rounds', 7);
/** `--direct`: spawn from this process, as run-service does with `RUN_STEP_SPAWNER=false`. */
const LAUNCHER: StepLauncher = process.argv.includes('--direct')
  ? DIRECT_LAUNCHER
  : { ...DIRECT_LAUNCHER, spawner: new ProcessSpawner() };

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

async function baselineMs(): Promise<number> {
  const env = stepEnvBase(process.env);
  const signal = new AbortController().signal;
  const started = performance.now();
  for (let i = 0; i < STEPS; i++) {
    await runProcess({
      file: '/bin/sh',
      args: ['-c', 'true'],
      cwd: process.cwd(),
      env,
      launcher: LAUNCHER,
      signal,
      killGraceMs: 1000,
      onStdout: () => undefined,
      onStderr: () => undefined,
    });
  }
  return performance.now() - started;
}

async function main(): Promise<void> {
  // `--state-write-ms N`: RUN_STATE_WRITE_MS for this bench (default: the config's default).
  const stateWrite = process.argv.indexOf('--state-write-ms');
  const overrides = stateWrite >= 0 ? { stateWriteMs: Number(process.argv[stateWrite + 1]) } : {};
  const env = await createRunTestEnv('bench_chain', overrides, LAUNCHER);
  const spec = `type: chain\nsteps:\n${Array.from({ length: STEPS }, (_, i) => `  - {name: s${i}, run: "true"}`).join('\n')}\n`;
  const overheads: number[] = [];
  try {
    await baselineMs();
    for (let round = 1; round <= ROUNDS; round++) {
      const baseline = await baselineMs();
      const requested = performance.now();
      const id = await env.start('chain', spec);
      const detail = await env.waitForEnd('chain', id, 120_000);
      const total = performance.now() - requested;
      const first = Date.parse(detail.steps[0]?.startedAt ?? '');
      const last = Date.parse(detail.steps[detail.steps.length - 1]?.finishedAt ?? '');
      const span = last - first;
      const perStep = (span - baseline) / STEPS;
      overheads.push(perStep);
      const durations = detail.steps.map(
        (step) => Date.parse(step.finishedAt ?? '') - Date.parse(step.startedAt ?? ''),
      );
      const busy = durations.reduce((sum, d) => sum + d, 0);
      console.log(
        `round ${round}: ${detail.statusLabel}; baseline ${STEPS} spawns ${baseline.toFixed(0)} ms (${(baseline / STEPS).toFixed(2)} ms each); ` +
          `chain first start → last finish ${span} ms (steps ${(busy / STEPS).toFixed(2)} ms each, gaps ${((span - busy) / (STEPS - 1)).toFixed(2)} ms each); ` +
          `request → terminal ${total.toFixed(0)} ms; overhead/step ${perStep.toFixed(2)} ms`,
      );
    }
    console.log(
      `engine overhead per step: median ${median(overheads).toFixed(2)} ms, best ${Math.min(...overheads).toFixed(2)} ms (target < 5 ms)`,
    );
  } finally {
    await env.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
