import { withTransaction, type Logger, type Pool } from '@dagu-mcp/runtime';
import { RunStatus, StepStatus } from '@dagu-mcp/contracts';
import type { RunConfig } from '../config/run-config';
import { logSinkOptions, type AttemptOutcome, type AttemptPlan } from './attempt-runner';
import type { NodeSpec } from '../core/run-types';
import { formatParams } from '../core/params';
import { isStepDone } from '../core/status-rules';
import { runEventOf, type RunEventPublisher } from '../events/run-event-publisher';
import { generateAttemptId } from '../core/run-id';
import { readStreamTotals } from '../store/log-reader';
import { LogSink } from '../store/log-sink';
import { handBackRun } from '../store/run-handback.repository';
import { findRunByPk } from '../store/run.repository';
import type { RunRecord } from '../store/run-rows';

/**
 * Hand-back on shutdown (deployment issue "runs in progress are not lost";
 * CONTRIBUTING §13 "finish or hand back in-flight jobs"). A run that did not
 * end within `RUN_STOP_GRACE_MS` after SIGTERM is killed by its replica and,
 * instead of being failed, handed back: its finished steps are kept, the
 * interrupted ones (and every lifecycle handler) run again in a new attempt,
 * and the run waits in the queue (status 5, no owner, `handed_back`) until
 * the dispatcher of a live replica — or of the next replica to start —
 * claims it, within `RUN_QUEUE_POLL_MS`, regardless of queue and
 * `max_active_runs` limits (it was admitted already). Steps interrupted by a
 * shutdown therefore run again (at least once), whether or not they are safe
 * to repeat.
 *
 * Not handed back: child runs of `dag.run` steps executing here (they end
 * failed as before; the parent's step runs again and starts a new child —
 * a child parked at a checkpoint, or not executing here, is left alone and
 * adopted by the parent's next attempt: `composition/child-runner.ts`), runs
 * a stop was requested for, and runs of a replica that died without SIGTERM
 * (the recovery sweep fails those: their processes may still be running).
 */

/** What a hand-back needs from the engine. */
export interface HandBackDeps {
  pool: Pool;
  config: RunConfig;
  logger: Logger;
  replica: string;
  publisher: RunEventPublisher;
}

/** The steps of `plan` that finished (their result is kept by a hand-back). */
export function finishedSteps(plan: AttemptPlan): NodeSpec[] {
  return plan.steps.filter((node) => isStepDone(plan.states.get(node.name)?.status ?? StepStatus.notStarted));
}

/**
 * Hands run `run` (attempt `plan`, owned here) back to the queue, keeping
 * `finished`. @returns false when it could not be handed back (no longer
 * running here, or a stop was requested): the caller ends it as usual.
 */
export async function handBack(
  deps: HandBackDeps,
  run: RunRecord,
  plan: AttemptPlan,
  finished: readonly NodeSpec[],
  outcome?: AttemptOutcome,
): Promise<boolean> {
  const keep = new Set(finished.map((node) => node.seq));
  const attemptId = generateAttemptId();
  const nextAttempt = run.attempt_no + 1;
  const error = `interrupted: run-service replica ${deps.replica} stopped; the step runs again in attempt ${nextAttempt}`;
  // The line goes in before the run is queued: the next attempt, on another replica, continues the numbering.
  if (!(await isStillRunningHere(deps, run))) return false;
  await appendSchedulerLine(
    deps,
    run.scheduler_log,
    `handing back: run-service replica ${deps.replica} stopped before the run ended; ${keep.size} finished step(s) kept, the rest runs again in attempt ${nextAttempt} on the next replica that claims it`,
  );
  const queued = await withTransaction(deps.pool, (client) =>
    handBackRun(client, {
      pk: run.pk,
      attemptNo: run.attempt_no,
      owner: deps.replica,
      attemptId,
      keep: [...keep],
      fresh: [...plan.steps.filter((node) => !keep.has(node.seq)), ...plan.handlers.values()],
      error,
      ...(outcome !== undefined
        ? {
            params: {
              text: formatParams(outcome.params),
              resolved: outcome.params,
              evaluated: outcome.paramsEvaluated,
            },
          }
        : {}),
    }),
  );
  if (queued === undefined) return false;
  deps.logger.info(
    { runPk: run.pk, dagRunId: run.dag_run_id, attemptNo: nextAttempt, kept: keep.size },
    'run handed back to the queue on shutdown',
  );
  await deps.publisher.publish(
    runEventOf(
      { dagName: queued.dag_name, dagRunId: queued.dag_run_id, attemptId: queued.attempt_id },
      RunStatus.queued,
    ),
  );
  return true;
}

async function isStillRunningHere(deps: HandBackDeps, run: RunRecord): Promise<boolean> {
  const current = await findRunByPk(deps.pool, run.pk);
  return (
    current !== undefined &&
    current.status === RunStatus.running &&
    current.owner === deps.replica &&
    current.attempt_no === run.attempt_no &&
    current.stop_requested_at === null
  );
}

async function appendSchedulerLine(deps: HandBackDeps, streamId: number, message: string): Promise<void> {
  try {
    const totals = await readStreamTotals(deps.pool, [streamId]);
    const sink = new LogSink(deps.pool, logSinkOptions(deps.config, deps.logger));
    sink.stream(streamId, totals.get(streamId) ?? 0).append(`${new Date().toISOString()} ${message}`);
    await sink.flush();
  } catch (error) {
    deps.logger.warn(
      { err: error instanceof Error ? error.message : String(error), streamId },
      'could not log the hand-back',
    );
  }
}
