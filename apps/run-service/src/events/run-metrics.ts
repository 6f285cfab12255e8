import { RunStatus, runStatusLabel } from '@dagu-mcp/contracts';
import { counter, durationHistogram, METRIC_NAMES, registerLabelledGauge, type Registry } from '@dagu-mcp/runtime';
import { countActiveRuns } from '../store/run-metrics.repository';
import type { Queryable } from '../store/run-rows';

/** The `dag` label of runs of DAGs past the label cap. */
export const OTHER_DAG_LABEL = 'other';

/** Buckets of run, step and checkpoint-wait durations, s: a run can take hours, a person longer. */
const LONG_BUCKETS_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14_400, 86_400];

/**
 * What run-service reports about runs for a platform team to chart and alert on (issue "The
 * first hour", item 9; the names are in `METRIC_NAMES`, the dashboard in
 * `infra/grafana/dagu-runs.json`, sample alerts in `infra/prometheus/dagu-alerts.yaml`):
 * runs started and finished by DAG and status, run and step durations, scheduler lag and
 * checkpoint wait (observed by this replica), and, read from PostgreSQL at scrape time, the runs
 * active now and the age of each named queue's oldest queued run (the same figures on every
 * replica: chart them with `max`).
 *
 * The `dag` label is bounded: the first `dagLabelsMax` DAG names this replica sees keep their
 * own label, later ones are counted as {@link OTHER_DAG_LABEL}.
 */
export class RunMetrics {
  private readonly dagLabels = new Set<string>();
  private readonly started: ReturnType<typeof counter<'dag'>>;
  private readonly finished: ReturnType<typeof counter<'dag' | 'status'>>;
  private readonly runDuration: ReturnType<typeof durationHistogram<'dag' | 'status'>>;
  private readonly stepDuration: ReturnType<typeof durationHistogram<'dag' | 'status'>>;
  private readonly schedulerLag: ReturnType<typeof durationHistogram<never>>;
  private readonly checkpointWait: ReturnType<typeof durationHistogram<'kind' | 'outcome'>>;

  /**
   * @param registry     the service's metric registry (`/metrics` on the ops port)
   * @param db           where `runs` lives, for the scrape-time gauges
   * @param dagLabelsMax `RUN_METRICS_DAG_LABELS_MAX`
   */
  constructor(
    registry: Registry,
    db: Queryable,
    private readonly dagLabelsMax: number,
  ) {
    this.started = counter(registry, METRIC_NAMES.runsStarted, 'DAG-run attempts started.', ['dag']);
    this.finished = counter(registry, METRIC_NAMES.runsFinished, 'DAG-runs ended or parked, by status.', [
      'dag',
      'status',
    ]);
    this.runDuration = longHistogram(registry, METRIC_NAMES.runDuration, 'Wall time of the attempt that ended a run.', [
      'dag',
      'status',
    ]);
    this.stepDuration = durationHistogram(registry, METRIC_NAMES.stepDuration, 'Wall time of a step.', [
      'dag',
      'status',
    ]);
    this.schedulerLag = durationHistogram(
      registry,
      METRIC_NAMES.schedulerLag,
      'How late a scheduled start was enqueued after its cron tick.',
      [],
    );
    this.checkpointWait = longHistogram(
      registry,
      METRIC_NAMES.checkpointWait,
      'Time a human task or approval waited for its decision.',
      ['kind', 'outcome'],
    );
    const active = async () => countActiveRuns(db);
    registerLabelledGauge(
      registry,
      METRIC_NAMES.runsActive,
      'DAG-runs now running, queued or waiting (all replicas).',
      ['status', 'queue'],
      async () =>
        (await active()).map((row) => ({
          labels: { status: runStatusLabel(row.status), queue: row.queue },
          value: row.count,
        })),
    );
    registerLabelledGauge(
      registry,
      METRIC_NAMES.runQueueOldestAge,
      'Age of the oldest queued run per named queue (all replicas).',
      ['queue'],
      async () =>
        (await active())
          .filter((row) => row.status === RunStatus.queued)
          .map((row) => ({ labels: { queue: row.queue }, value: row.oldestAgeSeconds })),
    );
  }

  /** The bounded `dag` label of `dag`. */
  dagLabel(dag: string): string {
    if (this.dagLabels.has(dag)) return dag;
    if (this.dagLabels.size >= this.dagLabelsMax) return OTHER_DAG_LABEL;
    this.dagLabels.add(dag);
    return dag;
  }

  /** An attempt of a run of `dag` started on this replica. */
  runStarted(dag: string): void {
    this.started.inc({ dag: this.dagLabel(dag) });
  }

  /** An attempt ended with run status `status` (ended, or parked `waiting`) after `seconds`. */
  runEnded(dag: string, status: number, seconds: number): void {
    const labels = { dag: this.dagLabel(dag), status: runStatusLabel(status) };
    this.finished.inc(labels);
    this.runDuration.observe(labels, seconds);
  }

  /** A step of a run of `dag` ended with step status label `status` after `seconds`. */
  stepEnded(dag: string, status: string, seconds: number): void {
    this.stepDuration.observe({ dag: this.dagLabel(dag), status }, seconds);
  }

  /** A scheduled start was enqueued `seconds` after its cron tick. */
  scheduled(lagSeconds: number): void {
    this.schedulerLag.observe(Math.max(0, lagSeconds));
  }

  /** A checkpoint of `kind` was decided (`outcome`: completed, approved, rejected) after waiting `seconds`. */
  checkpointDecided(kind: 'human_task' | 'approval', outcome: string, seconds: number): void {
    this.checkpointWait.observe({ kind, outcome }, Math.max(0, seconds));
  }
}

function longHistogram<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[]) {
  return durationHistogram(registry, name, help, labelNames, LONG_BUCKETS_SECONDS);
}
