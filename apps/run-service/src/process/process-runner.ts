import { spawn, type ChildProcess } from 'node:child_process';
import { basename } from 'node:path';
import { SpanKind, SpanStatusCode, startSpan, type Span } from '@dagu-mcp/runtime';
import type { StepChild, StepChildListener, StepLauncher } from '../core/step-launch';
import { LineSplitter } from './line-splitter';

/**
 * Runs one child process of a step (dagu-model §3; Dagu spec 013 "Exit,
 * Abort, And Timeout") and captures its output line by line as produced.
 *
 * The child is spawned detached: it leads a process group of its own, so a
 * stop or a timeout signals the whole group (`kill(-pid)`) and reaches the
 * shell's children and grandchildren too. SIGTERM first, SIGKILL after
 * `killGraceMs`. The step ends when the child has exited and its pipes are
 * drained; a background process still holding the pipes open is cut off
 * {@link PIPE_DRAIN_MS} after the child exited (its later output is lost).
 */

/** How long pipes may stay open after the child exited before they are closed, in ms. */
export const PIPE_DRAIN_MS = 500;

/** Waits for room in the log buffer (backpressure, see `LogSink`). */
export interface OutputBackpressure {
  readonly overloaded: boolean;
  waitForRoom(): Promise<void>;
}

/** What to run and where the output goes. */
export interface ProcessSpec {
  file: string;
  args: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
  /** Starts the process as the step user (every process of a user's code goes through it). */
  launcher: StepLauncher;
  /** Kills the group after this many ms; no limit when absent. */
  timeoutMs?: number;
  /** Aborting kills the group (stop of the run). */
  signal: AbortSignal;
  /** SIGTERM → SIGKILL delay, ms. */
  killGraceMs: number;
  onStdout: (line: string) => void;
  onStderr: (line: string) => void;
  backpressure?: OutputBackpressure;
  /** Name and attributes of the process's span (default `process <file name>`); it is a child of the active span. */
  trace?: { name: string; attributes?: Readonly<Record<string, string | number>> };
}

/** How the process ended. */
export interface ProcessOutcome {
  /** Exit code; `null` when killed by a signal or never started. */
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  /** Set when the process could not be started (e.g. `spawn foo ENOENT`). */
  spawnError?: string;
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone already.
  }
}

/**
 * Spawns `spec.file` with `spec.args` and resolves once it ended. Never
 * rejects: a failure to start is reported in `spawnError`.
 */
export function runProcess(spec: ProcessSpec): Promise<ProcessOutcome> {
  return new Promise((resolve) => {
    let timedOut = false;
    let aborted = false;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    const span: Span = startSpan(spec.trace?.name ?? `process ${basename(spec.file)}`, {
      kind: SpanKind.INTERNAL,
      attributes: { 'process.executable.name': basename(spec.file), ...spec.trace?.attributes },
    });
    // The spawner starts its children as the step user itself; anything else goes through `wrap` (setpriv).
    const launch =
      spec.launcher.spawner !== undefined
        ? { file: spec.file, args: [...spec.args] }
        : spec.launcher.wrap(spec.file, spec.args);
    const options = { cwd: spec.cwd, env: { ...spec.env } };
    const child: StepChild =
      spec.launcher.spawner?.spawn(launch.file, launch.args, options) ??
      directChild(spawn(launch.file, launch.args, { ...options, detached: true, stdio: ['ignore', 'pipe', 'pipe'] }));
    // A spawner's child learns its pid a little later (`started`): read it when it is needed.
    let registeredPid: number | undefined;
    const register = (): void => {
      if (registeredPid !== undefined || child.pid === undefined) return;
      registeredPid = child.pid;
      spec.launcher.groups?.started(registeredPid);
    };
    register();
    const stdout = new LineSplitter(spec.onStdout);
    const stderr = new LineSplitter(spec.onStderr);
    let terminating = false;
    const terminate = (): void => {
      terminating = true;
      killGroup(child.pid, 'SIGTERM');
      timers.push(setTimeout(() => killGroup(child.pid, 'SIGKILL'), spec.killGraceMs));
    };
    const onAbort = (): void => {
      aborted = true;
      terminate();
    };
    const finish = (outcome: Omit<ProcessOutcome, 'timedOut' | 'aborted'>): void => {
      if (settled) return;
      settled = true;
      register();
      if (registeredPid !== undefined) spec.launcher.groups?.ended(registeredPid);
      for (const timer of timers) clearTimeout(timer);
      spec.signal.removeEventListener('abort', onAbort);
      stdout.end();
      stderr.end();
      endSpan(span, { ...outcome, timedOut, aborted }, child.pid);
      resolve({ ...outcome, timedOut, aborted });
    };
    const pauseIfOverloaded = (): void => {
      const pressure = spec.backpressure;
      if (pressure === undefined || !pressure.overloaded || child.paused) return;
      child.pause();
      void pressure.waitForRoom().then(() => child.resume());
    };
    // A background process may still hold the pipes: close them after a short
    // drain (never while they are paused for backpressure: that data is the step's).
    const closePipesLater = (): void => {
      timers.push(
        setTimeout(() => {
          if (child.paused) return closePipesLater();
          child.closePipes();
        }, PIPE_DRAIN_MS),
      );
    };
    child.watch({
      started: () => {
        register();
        // A stop or timeout that came before the pid did.
        if (terminating && !settled) killGroup(child.pid, 'SIGTERM');
      },
      output: (fd, chunk) => {
        (fd === 1 ? stdout : stderr).push(chunk);
        pauseIfOverloaded();
      },
      exit: () => {
        register();
        closePipesLater();
      },
      close: (code, signal) => finish({ exitCode: code, signal }),
      error: (message) => finish({ exitCode: null, signal: null, spawnError: message }),
    });
    if (spec.signal.aborted) onAbort();
    else spec.signal.addEventListener('abort', onAbort, { once: true });
    if (spec.timeoutMs !== undefined) {
      timers.push(
        setTimeout(() => {
          timedOut = true;
          terminate();
        }, spec.timeoutMs),
      );
    }
  });
}

/** A `child_process` child as a {@link StepChild} (no spawner: started in this process). */
function directChild(child: ChildProcess): StepChild {
  const { stdout, stderr } = child;
  if (stdout === null || stderr === null) throw new Error('a step child is spawned with piped stdout and stderr');
  let paused = false;
  return {
    get pid() {
      return child.pid;
    },
    get paused() {
      return paused;
    },
    watch(listener: StepChildListener): void {
      child.on('spawn', () => listener.started());
      stdout.on('data', (chunk: Buffer) => listener.output(1, chunk));
      stderr.on('data', (chunk: Buffer) => listener.output(2, chunk));
      child.on('exit', () => listener.exit());
      child.on('close', (code: number | null, signal: NodeJS.Signals | null) => listener.close(code, signal));
      child.on('error', (error: Error) => listener.error(error.message));
    },
    pause(): void {
      paused = true;
      stdout.pause();
      stderr.pause();
    },
    resume(): void {
      paused = false;
      stdout.resume();
      stderr.resume();
    },
    closePipes(): void {
      stdout.destroy();
      stderr.destroy();
    },
  };
}

/** Ends a process span with its pid, exit code or signal; anything but exit 0 is an ERROR status. */
function endSpan(span: Span, outcome: ProcessOutcome, pid: number | undefined): void {
  if (pid !== undefined) span.setAttribute('process.pid', pid);
  if (outcome.exitCode !== null) span.setAttribute('process.exit.code', outcome.exitCode);
  if (outcome.signal !== null) span.setAttribute('process.exit.signal', outcome.signal);
  if (outcome.exitCode !== 0) {
    const reason =
      outcome.spawnError ??
      (outcome.timedOut
        ? 'timed out'
        : outcome.aborted
          ? 'aborted'
          : `exit ${outcome.exitCode ?? outcome.signal ?? '?'}`);
    span.setStatus({ code: SpanStatusCode.ERROR, message: reason });
  }
  span.end();
}
