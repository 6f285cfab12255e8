import { readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { StepCommand } from '@dagu-mcp/dag-spec';
import { runHttpRequest } from './http.executor';
import { interpolate, type InterpolationScope } from '../core/interpolate';
import { runProcess, type ProcessOutcome } from '../process/process-runner';
import type { NodeSpec, NodeState, RunContext } from '../core/run-types';
import { OutputCapture, parseOutputFile, readStepOutput, type PublishedOutputs } from '../core/step-outputs';
import { checkpointOf, type Checkpoint } from '../core/checkpoint-types';

/**
 * One try of a node (retry_policy runs it again; `step-runner.ts` decides).
 * A try creates a fresh, empty `$DAGU_OUTPUT_FILE`, runs what the step runs —
 * its commands in sequence (stopping at the first failure), its script, or
 * its http.request — and, when that succeeded, parses its published outputs.
 */

/** What one try produced. */
export interface TryResult {
  ok: boolean;
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

const UNSUPPORTED: Record<string, string> = {
  sub_dag: 'sub-DAG steps (dag.run / dag.enqueue) are',
  foreach: 'foreach steps are',
};

function matcherOf(patterns: readonly string[]): (line: string) => boolean {
  const tests = patterns.map((pattern) => {
    if (!pattern.startsWith('re:')) return (line: string) => line.includes(pattern);
    try {
      const regex = new RegExp(pattern.slice(3));
      return (line: string) => regex.test(line);
    } catch {
      return () => false;
    }
  });
  return (line) => tests.some((test) => test(line));
}

/** Characters of the last stderr line kept in a step's `error`. */
const MAX_ERROR_DETAIL = 500;

/** The error text of a process that did not succeed (Dagu's `exit status N`, plus the shell's last stderr line). */
function processError(outcome: ProcessOutcome, lastStderr: string, timeoutMs: number | undefined): string {
  if (outcome.timedOut) return `step timed out after ${(timeoutMs ?? 0) / 1000}s`;
  if (outcome.aborted) return 'aborted';
  if (outcome.spawnError !== undefined) return `failed to start: ${outcome.spawnError}`;
  if (outcome.exitCode === null) return `killed by signal ${outcome.signal ?? 'unknown'}`;
  return lastStderr === '' ? `exit status ${outcome.exitCode}` : `exit status ${outcome.exitCode}: ${lastStderr.slice(0, MAX_ERROR_DETAIL)}`;
}

/** Runs one try of `input.node`. Never rejects for anything the user's DAG does. */
export async function executeTry(ctx: RunContext, input: TryInput): Promise<TryResult> {
  const { node, state } = input;
  const stdoutLog = ctx.streamWriter(state.stdoutLog);
  const stderrLog = ctx.streamWriter(state.stderrLog);
  const captured = ctx.captureStreams !== undefined && (ctx.captureStreams.has(node.name) || (node.step.id !== undefined && ctx.captureStreams.has(node.step.id)));
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
  const wired = (node.step.kind === 'sub_dag' && ctx.children !== undefined) || (node.step.kind === 'foreach' && ctx.foreach !== undefined);
  const unsupported = wired ? undefined : UNSUPPORTED[node.step.kind];
  if (unsupported !== undefined) {
    const error = `${unsupported} not supported by this engine yet`;
    onStderr(error);
    return { ok: false, error, timedOut: false, aborted: false, outputMatched };
  }
  if (node.step.kind === 'human_task') {
    return { ok: true, timedOut: false, aborted: false, outputMatched, checkpoint: checkpointOf(node.step, input.scope) };
  }
  const tryId = `${node.seq}-${++tryCounter}`;
  const outputFile = join(ctx.scratchDir, `outputs-${tryId}`);
  const scriptFile = join(ctx.scratchDir, `script-${tryId}`);
  try {
    await writeFile(outputFile, '');
    const env = { ...input.env, DAGU_OUTPUT_FILE: outputFile };
    const base = { ...input, env, onStdout, onStderr, scriptFile };
    const { outputs: bodyOutputs, ...result } = await runBody(ctx, base, () => lastStderr);
    const streams = captured ? { stdout: stdoutText.text().trim(), stderr: stderrText.text().trim() } : {};
    if (!result.ok) return { ...result, outputMatched, ...streams };
    const published = await publish(node, outputFile, stdoutText.text(), stderrText.text());
    if (!published.ok) {
      onStderr(published.error);
      return { ok: false, exitCode: result.exitCode, error: published.error, timedOut: false, aborted: false, outputMatched, ...streams };
    }
    if (bodyOutputs !== undefined) published.value.outputs = { ...published.value.outputs, ...bodyOutputs };
    const checkpoint = checkpointOf(node.step, input.scope);
    return { ...result, published: published.value, outputMatched, ...streams, ...(checkpoint !== undefined ? { checkpoint } : {}) };
  } finally {
    await rm(outputFile, { force: true }).catch(() => undefined);
    if (node.step.kind === 'script') await rm(scriptFile, { force: true }).catch(() => undefined);
  }
}

/** Distinguishes the files of successive tries (retries, repeats) of one node. */
let tryCounter = 0;

interface BodyInput extends TryInput {
  onStdout(line: string): void;
  onStderr(line: string): void;
  scriptFile: string;
}

type BodyResult = Omit<TryResult, 'outputMatched' | 'published' | 'stdout' | 'stderr'> & { outputs?: Record<string, string> };

async function runBody(ctx: RunContext, input: BodyInput, lastStderr: () => string): Promise<BodyResult> {
  const { step } = input.node;
  if (step.kind === 'sub_dag' && ctx.children !== undefined) {
    // dag.run / dag.enqueue: a child run; its outcome is the step's (composition/child-runner.ts).
    const outcome = await ctx.children.run(ctx, input.node, input.scope, input.signal, { onStdout: input.onStdout, onStderr: input.onStderr });
    return { ok: outcome.ok, ...(outcome.error !== undefined ? { error: outcome.error } : {}), timedOut: false, aborted: outcome.aborted };
  }
  if (step.kind === 'foreach' && ctx.foreach !== undefined) {
    const outcome = await ctx.foreach.run(ctx, input.node, input.scope, input.signal, { onStdout: input.onStdout, onStderr: input.onStderr });
    return {
      ok: outcome.ok,
      ...(outcome.error !== undefined ? { error: outcome.error } : {}),
      ...(outcome.outputs !== undefined ? { outputs: outcome.outputs } : {}),
      timedOut: false,
      aborted: outcome.aborted,
    };
  }
  if (step.kind === 'http' && step.action?.type === 'http.request') {
    const outcome = await runHttpRequest(step.action, input.scope, {
      signal: input.signal,
      timeoutMs: input.timeoutMs,
      onBody: (text) => {
        if (text === '') return;
        for (const line of text.replace(/\r?\n$/, '').split('\n')) input.onStdout(line.replace(/\r$/, ''));
      },
    });
    if (outcome.error !== undefined) input.onStderr(outcome.error);
    return outcome;
  }
  const shell = step.shell ?? [ctx.config.defaultShell];
  const [shellFile, ...shellArgs] = shell;
  const positional = ctx.env.positional;
  const runs: Array<{ file: string; args: string[] }> = [];
  if (step.kind === 'script') {
    await writeFile(input.scriptFile, interpolate(step.script ?? '', input.scope, 'shell'), { mode: 0o700 });
    const [file, ...args] = step.interpreter ?? shell;
    runs.push({ file: file ?? ctx.config.defaultShell, args: [...args, input.scriptFile, ...positional] });
  } else {
    for (const command of step.commands ?? []) runs.push(commandArgv(command, shellFile ?? ctx.config.defaultShell, shellArgs, input.scope, positional));
  }
  let last: BodyResult = { ok: true, exitCode: 0, timedOut: false, aborted: false };
  for (const run of runs) {
    const outcome = await runProcess({
      ...run,
      cwd: input.cwd,
      env: input.env,
      signal: input.signal,
      timeoutMs: input.timeoutMs,
      killGraceMs: ctx.config.killGraceMs,
      trace: {
        name: `step ${input.node.name}`,
        attributes: { 'dagu.dag.name': ctx.attempt.dagName, 'dagu.run.id': ctx.attempt.dagRunId, 'dagu.step.name': input.node.name, 'dagu.attempt.no': ctx.attempt.attemptNo },
      },
      onStdout: input.onStdout,
      onStderr: input.onStderr,
      backpressure: {
        get overloaded() {
          return ctx.sink.overloaded;
        },
        waitForRoom: () => {
          ctx.log(`output of ${input.node.name} paused: the log buffer is full until PostgreSQL catches up`);
          return ctx.sink.waitForRoom();
        },
      },
    });
    const ok = outcome.exitCode === 0 && !outcome.timedOut && !outcome.aborted;
    if (outcome.spawnError !== undefined) input.onStderr(`failed to start ${run.file}: ${outcome.spawnError}`);
    const exitCode = outcome.exitCode ?? undefined;
    last = ok
      ? { ok, exitCode, timedOut: false, aborted: false }
      : { ok, exitCode, error: processError(outcome, lastStderr(), input.timeoutMs), timedOut: outcome.timedOut, aborted: outcome.aborted };
    if (!ok) break;
  }
  return last;
}

function commandArgv(
  command: StepCommand,
  shellFile: string,
  shellArgs: readonly string[],
  scope: InterpolationScope,
  positional: readonly string[],
): { file: string; args: string[] } {
  if (command.kind === 'exec') {
    const [file, ...args] = command.argv.map((arg) => interpolate(arg, scope, 'plain'));
    return { file: file ?? '', args };
  }
  // `sh -c <line> <$0> <$1> …`: positional params become the shell's $1, $2, ….
  return { file: shellFile, args: [...shellArgs, '-c', interpolate(command.line, scope, 'shell'), basename(shellFile), ...positional] };
}

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
