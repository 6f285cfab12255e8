import type { HandlerKind, NormalizedDag, NormalizedStep } from '@dagu-mcp/dag-spec';
import { type StepStatusCode } from '@dagu-mcp/contracts';
import type { RunConfig } from '../config/run-config';
import type { LogSink, LogStreamWriter } from '../store/log-sink';
import type { InterpolationScope, StepRefValues } from './interpolate';
import type { RunEnvironment } from '../process/run-environment';
import type { PublishedOutputs } from './step-outputs';
import type { Checkpoint } from './checkpoint-types';

/**
 * The shapes the engine passes around while an attempt runs: a node (a step
 * or a lifecycle handler) with its spec and its live state, and the run
 * context the step runner reads and writes.
 */

/** A step or a lifecycle handler of the attempt. `seq` = position in execution order. */
export interface NodeSpec {
  readonly seq: number;
  readonly name: string;
  readonly step: NormalizedStep;
  /** Set for lifecycle handlers (`handler_on`). */
  readonly handler?: HandlerKind;
}

/** The live (and persisted) state of a node in this attempt. */
export interface NodeState {
  status: StepStatusCode;
  error?: string;
  startedAt?: Date;
  finishedAt?: Date;
  /** Tries after the first (retry_policy). */
  retryCount: number;
  exitCode?: number;
  /** Failed, but `continue_on` let the run go on. */
  allowedFailure: boolean;
  outputs: PublishedOutputs;
  /** The open checkpoint of a waiting step (human.task, approval). */
  checkpoint?: Checkpoint;
  readonly stdoutLog: number;
  readonly stderrLog: number;
}

/** Persists node states (write-behind, in order per node). */
export interface NodeStateSink {
  save(node: NodeSpec, state: NodeState): void;
}

/** Identity of the running attempt. */
export interface AttemptIdentity {
  readonly runPk: number;
  readonly dagName: string;
  readonly dagRunId: string;
  readonly attemptNo: number;
  readonly attemptId: string;
  /** `dagu://runs/{name}/{id}/logs`: the value of `DAG_RUN_LOG_FILE`. */
  readonly logsUri: string;
}

/** What a `dag.run` / `dag.enqueue` / `foreach` step reports (composition/child-runner.ts, foreach/foreach-runner.ts). */
export interface SubDagOutcome {
  ok: boolean;
  error?: string;
  aborted: boolean;
  /** Published as `${steps.<id>.outputs.<name>}` on success (foreach `collect`: name → JSON array). */
  outputs?: Record<string, string>;
}

/** Runs the child run of a `dag.run` / `dag.enqueue` step to its end. */
export interface SubDagRunner {
  run(ctx: RunContext, node: NodeSpec, scope: InterpolationScope, signal: AbortSignal, io: { onStdout(line: string): void; onStderr(line: string): void }): Promise<SubDagOutcome>;
}

/** Runs a `foreach` step's items (foreach/foreach-runner.ts). */
export interface ForeachRunner {
  run(ctx: RunContext, node: NodeSpec, scope: InterpolationScope, signal: AbortSignal, io: { onStdout(line: string): void; onStderr(line: string): void }): Promise<SubDagOutcome>;
}

/** Everything a node needs while it runs. */
export interface RunContext {
  readonly attempt: AttemptIdentity;
  readonly dag: NormalizedDag;
  /** The run's spec snapshot (YAML stream: local sub-DAGs are its later documents). */
  readonly spec: string;
  /** Starts child runs; absent where composition is not wired (some tests). */
  readonly children?: SubDagRunner;
  /** Runs foreach steps; absent where foreach is not wired (some tests). */
  readonly foreach?: ForeachRunner;
  /** Set inside a foreach item: the top-level foreach step and the item path (nested foreach). */
  readonly foreachAt?: { readonly stepName: string; readonly path: string };
  /** Names and ids of steps whose stdout/stderr text is kept for `${steps.<id>.stdout}` (foreach `collect`). */
  readonly captureStreams?: ReadonlySet<string>;
  readonly env: RunEnvironment;
  readonly config: RunConfig;
  readonly sink: LogSink;
  readonly states: NodeStateSink;
  /** `output:` variables of finished steps. */
  readonly outputVars: Map<string, string>;
  /** Finished steps by id and name, for `${steps.…}` / `${id.…}` references. */
  readonly stepRefs: Map<string, StepRefValues>;
  /** One scheduler-log line (what the engine did). */
  log(message: string): void;
  /** A private temporary directory of the attempt (output files, scripts); removed when the attempt ends. */
  readonly scratchDir: string;
  /** Opens the writer of a stream (shared numbering across tries). */
  streamWriter(streamId: number): LogStreamWriter;
}
