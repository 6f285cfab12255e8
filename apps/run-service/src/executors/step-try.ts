import { unlinkSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StepStatus } from '@dagu-mcp/contracts';
import { checkpointOf, type Checkpoint } from '../core/checkpoint-types';
import { compileAuthorRegex } from '../core/author-regex';
import type { InterpolationScope } from '../core/interpolate';
import { StepLogBudget } from '../core/log-bound';
import type { LogStreamWriter, NodeSpec, NodeState, RunContext } from '../core/run-types';
import { OutputCapture, parseOutputFile, readStepOutput, type PublishedOutputs } from '../core/step-outputs';

/**
 * One try of a node (retry_policy runs it again; engine/step-runner.ts
 * decides). A try logs the step's output lines, creates a fresh, empty
 * `$DAGU_OUTPUT_FILE`, has the executor of the step's kind run the body
 * (`ctx.executors`: commands, script, http.request, child run, foreach items,
 * checkpoint) and, when that succeeded, parses its published outputs.
 */

/** What one try produced. */
export interface TryResult {
  ok: boolean;
  /** With `ok`: the step ends `partially_succeeded` (a foreach or a child run that partly failed). */
  partial?: boolean;
  exitCode?: number;
  error?: string;
  timedOut: boolean;
  aborted: boolean;
  /** A stdout/stderr line matched a `continue_on.output` pattern. */
  outputMatched: boolean;
  published?: PublishedOutputs;
  /** Set when the step now waits for a person (human.task, approval): the run parks. */
  checkpoint?: Checkpoint;
  /** Trimmed stdout / stderr text, kept when `ctx.captureStreams` names the step. */
  stdout?: string;
  stderr?: string;
}

/** What a try runs with, fixed when the node started. */
export interface TryInput {
  node: NodeSpec;
  state: NodeState;
  scope: InterpolationScope;
  /** The step's environment (without `DAGU_OUTPUT_FILE`). */
  env: Readonly<Record<string, string>>;
  cwd: string;
  signal: AbortSignal;
  timeoutMs?: number;
}

function matcherOf(patterns: readonly string[]): (line: string) => boolean {
  const tests = patterns.map((pattern) => {
    if (!pattern.startsWith('re:')) return (line: string) => line.includes(pattern);
    // RE2 syntax, linear time (core/author-regex.ts); a pattern the engine refuses never matches.
    const test = compileAuthorRegex(pattern.slice(3));
    return typeof test === 'function' ? test : () => false;
  });
  return (line) => tests.some((test) => test(line));
}

/**
 * Runs one try of `input.node`. Never rejects for anything the user's DAG does.
 * Its stored output is bounded (`RUN_STEP_LOG_MAX_BYTES`, core/log-bound.ts):
 * the head and the tail, with a marker of what was dropped between them.
 */
export async function executeTry(ctx: RunContext, input: TryInput): Promise<TryResult> {
  const budget = new StepLogBudget(ctx.config.stepLogMaxBytes);
  const stdoutLog = budget.wrap(ctx.streamWriter(input.state.stdoutLog));
  const stderrLog = budget.wrap(ctx.streamWriter(input.state.stderrLog));
  try {
    return await executeBoundedTry(ctx, input, stdoutLog, stderrLog);
  } finally {
    stdoutLog.finish();
    stderrLog.finish();
  }
}

async function executeBoundedTry(
  ctx: RunContext,
  input: TryInput,
  stdoutLog: LogStreamWriter,
  stderrLog: LogStreamWriter,
): Promise<TryResult> {
  const { node, state } = input;
  const captured =
    ctx.captureStreams !== undefined &&
    (ctx.captureStreams.has(node.name) || (node.step.id !== undefined && ctx.captureStreams.has(node.step.id)));
  const wantsOutput = node.step.output !== undefined || captured;
  const stdoutText = new OutputCapture();
  const stderrText = new OutputCapture();
  const matches = matcherOf(node.step.continueOn.output);
  let outputMatched = false;
  let lastStderr = '';
  const onStdout = (line: string): void => {
    stdoutLog.append(line);
    if (wantsOutput) stdoutText.append(line);
    if (!outputMatched && node.step.continueOn.output.length > 0 && matches(line)) outputMatched = true;
  };
  const onStderr = (line: string): void => {
    stderrLog.append(line);
    if (wantsOutput) stderrText.append(line);
    if (line.trim() !== '') lastStderr = line.trim();
    if (!outputMatched && node.step.continueOn.output.length > 0 && matches(line)) outputMatched = true;
  };
  const executor = ctx.executors.executorOf(node.step.kind);
  const lastStderrLine = (): string => lastStderr;
  // A dag.run step whose child waits at a checkpoint shows waiting (dagu-model §3 "Run outcome").
  const setWaiting = (waits: boolean): void => {
    const next = waits ? StepStatus.waiting : StepStatus.running;
    if (state.status === next || (state.status !== StepStatus.running && state.status !== StepStatus.waiting)) return;
    state.status = next;
    ctx.states.save(node, state);
    ctx.log(`step ${waits ? 'waiting' : 'running'}: ${node.name} (its sub-DAG run ${waits ? 'waits' : 'goes on'})`);
  };
  if (!executor.publishesOutputs) {
    // No output file, no script file: the executor's result is the try's (a human task opens its checkpoint).
    const { outputs: _outputs, ...result } = await executor.run(ctx, {
      ...input,
      scriptFile: '',
      onStdout,
      onStderr,
      lastStderr: lastStderrLine,
    });
    return { ...result, outputMatched };
  }
  const tryId = `${node.seq}-${++tryCounter}`;
  const outputFile = join(ctx.scratchDir, `outputs-${tryId}`);
  const scriptFile = join(ctx.scratchDir, `script-${tryId}`);
  try {
    // Synchronous on purpose: the scratch directory is on local disk (os.tmpdir()), where creating
    // and removing an empty file takes microseconds, while each promise call is a thread-pool round
    // trip (three for a write: open, write, close) that added ≈ 1.3 ms to every step.
    writeFileSync(outputFile, '');
    await ctx.launcher.adopt(outputFile);
    const env = { ...input.env, DAGU_OUTPUT_FILE: outputFile };
    const {
      outputs: bodyOutputs,
      checkpoint: opened,
      ...result
    } = await executor.run(ctx, {
      ...input,
      env,
      onStdout,
      onStderr,
      scriptFile,
      lastStderr: lastStderrLine,
      setWaiting,
    });
    const streams = captured ? { stdout: stdoutText.text().trim(), stderr: stderrText.text().trim() } : {};
    if (!result.ok) return { ...result, outputMatched, ...streams };
    const published = await publish(node, outputFile, stdoutText.text(), stderrText.text());
    if (!published.ok) {
      onStderr(published.error);
      return {
        ok: false,
        exitCode: result.exitCode,
        error: published.error,
        timedOut: false,
        aborted: false,
        outputMatched,
        ...streams,
      };
    }
    if (bodyOutputs !== undefined) published.value.outputs = { ...published.value.outputs, ...bodyOutputs };
    // An approval gate opens its checkpoint once its commands succeeded.
    const checkpoint = opened ?? checkpointOf(node.step, input.scope);
    return {
      ...result,
      published: published.value,
      outputMatched,
      ...streams,
      ...(checkpoint !== undefined ? { checkpoint } : {}),
    };
  } finally {
    removeQuietly(outputFile);
    if (node.step.kind === 'script') removeQuietly(scriptFile);
  }
}

/** Deletes a scratch file of a try; one already gone (or never written) is fine. */
function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Gone already, or never written (a script step that failed before writing its script).
  }
}

/** Distinguishes the files of successive tries (retries, repeats) of one node. */
let tryCounter = 0;

async function publish(
  node: NodeSpec,
  outputFile: string,
  stdout: string,
  stderr: string,
): Promise<{ ok: true; value: PublishedOutputs } | { ok: false; error: string }> {
  const value: PublishedOutputs = {};
  if (node.step.outputs.length > 0) {
    const content = await readFile(outputFile, 'utf8').catch(() => '');
    const parsed = parseOutputFile(content, node.step.outputs);
    if (!parsed.ok) return parsed;
    value.outputs = parsed.value;
  }
  if (node.step.output !== undefined) {
    const read = readStepOutput(node.step.output, stdout, stderr);
    if (!read.ok) return read;
    Object.assign(value, read.value);
  }
  return { ok: true, value };
}
