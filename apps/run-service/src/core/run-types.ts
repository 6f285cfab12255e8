import type { StepStatusCode } from '@dagu-mcp/contracts';
import type { HandlerKind, NormalizedDag, NormalizedStep, StepKind } from '@dagu-mcp/dag-spec';
import type { RunConfig } from '../config/run-config';
import type { Checkpoint } from './checkpoint-types';
import type { InterpolationScope, StepRefValues } from './interpolate';
import type { RunParam } from './params';
import type { PublishedOutputs } from './step-outputs';
import type { StepLauncher } from './step-launch';

/**
 * The step execution contract: the shapes the engine passes around while an
 * attempt runs — a node (a step or a lifecycle handler) with its spec and its
 * live state, the run context the step runner reads and writes, and what a
 * step executor (one per step kind, executors/) is given and returns. Types
 * only: the floors above implement them (store/ the sinks, process/ the
 * environment, executors/ the executors, engine/ the graph runner).
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

/**
 * What every step of a run shares, computed once when an attempt starts:
 * evaluated params, the base environment (process env + DAG env + params,
 * layers 1–3 of `env-merge.ts`) and the run's working directory.
 */
export interface RunEnvironment {
  /** Effective params with evaluated defaults. */
  readonly params: readonly RunParam[];
  readonly paramMap: ReadonlyMap<string, string>;
  /** Values of the positional params `1`, `2`, … in order: the shell's `$1`, `$2`, …. */
  readonly positional: readonly string[];
  readonly base: Readonly<Record<string, string>>;
  /** Default working directory of the steps (absolute, exists). */
  readonly workDir: string;
}

/** Appends lines to one stream; line numbers continue from the stream's count when it was opened. */
export interface LogStreamWriter {
  readonly streamId: number;
  /** Buffers one line and returns its 1-based number. A `\n` inside becomes a space. */
  append(text: string): number;
  /** Lines in the stream so far (written or buffered). */
  readonly lineCount: number;
}

/** Back-pressure of the attempt's log buffer (store/log-sink.ts): a step's pipes pause while it is over its limit. */
export interface LogBackpressure {
  /** True while more output is buffered than PostgreSQL has taken. */
  readonly overloaded: boolean;
  /** Resolves once the buffer has room again. */
  waitForRoom(): Promise<void>;
}

/** One line of a step's stdout or stderr. */
export type LineHandler = (line: string) => void;

/** What a step executor runs one try with (fixed when the node started, plus the try's own files and output handlers). */
export interface StepExecInput {
  node: NodeSpec;
  scope: InterpolationScope;
  /** The step's environment; with `DAGU_OUTPUT_FILE` when the executor publishes outputs. */
  env: Readonly<Record<string, string>>;
  cwd: string;
  signal: AbortSignal;
  /** Per-try timeout (`timeout_sec`), in ms; absent = none. */
  timeoutMs?: number;
  /** Path a script step's text is written to (removed after the try); empty when the executor publishes no outputs. */
  scriptFile: string;
  onStdout: LineHandler;
  onStderr: LineHandler;
  /** The last non-blank stderr line so far (Dagu's `exit status N: <line>` error text). */
  lastStderr(): string;
}

/** What one try of a step's body produced (before its published outputs are read). */
export interface StepExecResult {
  ok: boolean;
  exitCode?: number;
  error?: string;
  timedOut: boolean;
  aborted: boolean;
  /** Outputs the executor publishes itself (foreach `collect`: name → JSON array), merged over the output file's. */
  outputs?: Record<string, string>;
  /** Set by an executor whose step waits for a person right away (human.task). */
  checkpoint?: Checkpoint;
}

/**
 * Runs the body of one try of a step of one kind (dagu-model §3 step types):
 * its commands, script, HTTP request, child run or foreach items. Never
 * rejects for anything the user's DAG does: a failure is `ok: false`.
 */
export interface StepExecutor {
  /**
   * True: the try gets a fresh `$DAGU_OUTPUT_FILE` and, on success, its
   * published outputs are read (Dagu spec 012). False: the result is final as
   * returned (a human task only opens its checkpoint).
   */
  readonly publishesOutputs: boolean;
  run(ctx: RunContext, input: StepExecInput): Promise<StepExecResult>;
}

/** The executor of each step kind (executors/step-executor-registry.ts). */
export interface StepExecutors {
  /** @throws Error when `kind` has no executor (never after start-up: the registry is checked complete then). */
  executorOf(kind: StepKind): StepExecutor;
}

/**
 * Runs a graph of nodes to its end (engine/graph-runner.ts), given to
 * executors through the context so a foreach item can run its body without
 * importing the engine above it.
 */
export type GraphRunner = (
  ctx: RunContext,
  nodes: readonly NodeSpec[],
  states: Map<string, NodeState>,
  signal: AbortSignal,
) => Promise<void>;

/** Runs the child run of a `dag.run` / `dag.enqueue` step to its end. */
export interface SubDagRunner {
  run(
    ctx: RunContext,
    node: NodeSpec,
    scope: InterpolationScope,
    signal: AbortSignal,
    io: { onStdout(line: string): void; onStderr(line: string): void },
  ): Promise<SubDagOutcome>;
}

/** Runs a `foreach` step's items (foreach/foreach-runner.ts). */
export interface ForeachRunner {
  run(
    ctx: RunContext,
    node: NodeSpec,
    scope: InterpolationScope,
    signal: AbortSignal,
    io: { onStdout(line: string): void; onStderr(line: string): void },
  ): Promise<SubDagOutcome>;
}

/** Everything a node needs while it runs. */
/** What {@link RunContext.stepEnded} reports. */
export interface StepEndReport {
  readonly step: string;
  /** The step status label (dagu-model §1). */
  readonly status: string;
  /** From the step's start to its end, ms; absent when the step never started (skipped). */
  readonly durationMs?: number;
  readonly exitCode?: number;
  /** The precondition that skipped it. */
  readonly condition?: string;
}

export interface RunContext {
  readonly attempt: AttemptIdentity;
  readonly dag: NormalizedDag;
  /** The run's spec snapshot (YAML stream: local sub-DAGs are its later documents). */
  readonly spec: string;
  /** The executor of every step kind (checked complete when the engine starts). */
  readonly executors: StepExecutors;
  /** Runs a graph of nodes (a foreach item's body). */
  readonly runGraph: GraphRunner;
  /** Set inside a foreach item: the top-level foreach step and the item path (nested foreach). */
  readonly foreachAt?: { readonly stepName: string; readonly path: string };
  /** Names and ids of steps whose stdout/stderr text is kept for `${steps.<id>.stdout}` (foreach `collect`). */
  readonly captureStreams?: ReadonlySet<string>;
  readonly env: RunEnvironment;
  readonly config: RunConfig;
  readonly sink: LogBackpressure;
  readonly states: NodeStateSink;
  /** `output:` variables of finished steps. */
  readonly outputVars: Map<string, string>;
  /** Finished steps by id and name, for `${steps.…}` / `${id.…}` references. */
  readonly stepRefs: Map<string, StepRefValues>;
  /** One scheduler-log line (what the engine did). */
  log(message: string): void;
  /**
   * A step ended (finished or skipped): one structured line in the service's log at `info` and
   * the step-duration metric (operators' view of what runs do; issue "The first hour", items 8
   * and 9). Optional: tests that build a context by hand may leave it out.
   */
  stepEnded?(report: StepEndReport): void;
  /** A private temporary directory of the attempt (output files, scripts); removed when the attempt ends. */
  readonly scratchDir: string;
  /** Starts every process of the DAG author's code as the step user (docs/security.md). */
  readonly launcher: StepLauncher;
  /** Opens the writer of a stream (shared numbering across tries). */
  streamWriter(streamId: number): LogStreamWriter;
}
