import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import type { SpawnOptions, StepChild, StepChildListener, StepIdentity, StepSpawner } from '../../core/step-launch';
import { encodeToSpawner, SpawnerFrameReader, type FromSpawner, type ToSpawner } from './spawner-protocol';

/**
 * Where the build puts the native step spawner (`native/step-spawner.c`,
 * compiled by `scripts/build-native.sh` into `dist/native/`), from the
 * sources or the build alike.
 *
 * @returns its path, or undefined when it was not built (no C compiler at build time)
 */
export function findStepSpawner(): string | undefined {
  const path = join(__dirname, '..', '..', '..', 'dist', 'native', 'step-spawner');
  return existsSync(path) ? path : undefined;
}

/**
 * run-service's side of the native step spawner (`native/step-spawner.c`;
 * docs/decisions.md "Steps start from a small spawner process").
 *
 * One spawner process is started when this is created and again on the next
 * start after it died. Each {@link StepChild} it hands out mirrors one child
 * of the spawner: `pid` once `started` arrives (the runner kills the group
 * with `process.kill(-pid)` itself), output chunks, `exit` and `close`. When
 * the spawner dies, every child still open ends with an `error` ("the step
 * spawner exited") after its group was killed, so no step hangs.
 *
 * The spawner keeps run-service's event loop alive only while one of its
 * children is open; when run-service exits, the spawner's stdin reaches its
 * end and the spawner kills what it started and exits.
 */
export class ProcessSpawner implements StepSpawner {
  private process: ChildProcess | undefined;
  private nextId = 1;
  private readonly children = new Map<number, RemoteChild>();

  private readonly binary: string;

  /**
   * Starts the spawner now (so the first step does not wait for it).
   *
   * @param opts.identity the step user (`RUN_STEP_USER`): every child runs as it; default: as run-service
   * @param opts.setpriv  util-linux `setpriv`: the spawner starts under `setpriv --no-new-privs`
   *                      (required with an identity, docs/security.md); default: started directly
   * @param opts.binary   the spawner executable (default: {@link findStepSpawner})
   * @throws Error with an identity but no `setpriv`, or when the spawner was not built
   */
  constructor(private readonly opts: { identity?: StepIdentity; setpriv?: string; binary?: string } = {}) {
    if (opts.identity !== undefined && opts.setpriv === undefined)
      throw new Error('the step spawner needs util-linux setpriv to start steps as the step user');
    const binary = opts.binary ?? findStepSpawner();
    if (binary === undefined) throw new Error('the native step spawner was not built (scripts/build-native.sh)');
    this.binary = binary;
    this.ensureProcess();
  }

  /** Starts `file args` in the spawner; never throws (a failure arrives as the child's `error`). */
  spawn(file: string, args: readonly string[], opts: SpawnOptions): StepChild {
    // First: a spawner that died but whose close has not come yet fails its children now, before
    // this one joins them (else it would be failed while it runs, unsupervised).
    this.ensureProcess();
    const id = this.nextId++;
    const child = new RemoteChild(id, (message) => this.post(message));
    this.children.set(id, child);
    // While a child is open the pipes keep the event loop alive (its answers are awaited).
    if (this.children.size === 1) this.refPipes(true);
    this.post({
      t: 'spawn',
      id,
      file,
      args,
      cwd: opts.cwd,
      env: opts.env,
      ...(opts.as !== undefined ? { as: opts.as } : {}),
    });
    return child;
  }

  /** Children started and not yet closed (the pool's measure of load, spawner-pool.ts). */
  get open(): number {
    return this.children.size;
  }

  /** The spawner's pid (tests). */
  get pid(): number | undefined {
    return this.process?.pid;
  }

  private post(message: ToSpawner): void {
    // A child failed already (its spawner died) is never started.
    if (!this.children.has(message.id)) return;
    const proc = this.ensureProcess();
    if (!this.children.has(message.id)) return;
    let frame: Buffer;
    try {
      frame = encodeToSpawner(message);
    } catch (error) {
      this.failChild(message.id, error instanceof Error ? error.message : String(error));
      return;
    }
    if (proc.stdin === null || !proc.stdin.writable) {
      this.failChild(message.id, 'the step spawner is not running');
      return;
    }
    proc.stdin.write(frame);
  }

  /** Ends child `id` with `error` and stops counting it open. */
  private failChild(id: number, message: string): void {
    const child = this.children.get(id);
    if (child === undefined) return;
    this.children.delete(id);
    if (this.children.size === 0) this.refPipes(false);
    child.fail(message);
  }

  private refPipes(on: boolean): void {
    for (const stream of [this.process?.stdin, this.process?.stdout]) {
      // A child's piped stdio is a net.Socket, which can be unref'd.
      if (!(stream instanceof Socket)) continue;
      if (on) stream.ref();
      else stream.unref();
    }
  }

  private ensureProcess(): ChildProcess {
    const current = this.process;
    if (current !== undefined) {
      if (current.exitCode === null && current.signalCode === null) return current;
      // Dead, its close not seen yet: its children fail now, before a new spawner takes their ids' place.
      this.lost(current);
    }
    const { identity, setpriv } = this.opts;
    const args = identity !== undefined ? ['--uid', String(identity.uid), '--gid', String(identity.gid)] : [];
    const options = {
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['pipe', 'pipe', 'inherit'] as ['pipe', 'pipe', 'inherit'],
    };
    const proc =
      setpriv === undefined
        ? spawn(this.binary, args, options)
        : spawn(setpriv, ['--no-new-privs', '--', this.binary, ...args], options);
    const reader = new SpawnerFrameReader((message) => this.receive(message));
    proc.stdout?.on('data', (chunk: Buffer) => {
      try {
        reader.push(chunk);
      } catch (error) {
        process.stderr.write(`run-service: ${error instanceof Error ? error.message : String(error)}\n`);
        proc.kill('SIGKILL');
      }
    });
    // A write after the spawner died fails with EPIPE; its `close` fails the children.
    proc.stdin?.on('error', () => undefined);
    proc.on('close', () => this.lost(proc));
    proc.on('error', () => this.lost(proc));
    proc.unref();
    this.process = proc;
    this.refPipes(this.children.size > 0);
    return proc;
  }

  private receive(message: FromSpawner): void {
    const child = this.children.get(message.id);
    if (child === undefined) return;
    if (message.t === 'close' || message.t === 'error') {
      this.children.delete(message.id);
      if (this.children.size === 0) this.refPipes(false);
    }
    child.receive(message);
  }

  /** The spawner died: kill and fail what it had started. */
  private lost(proc: ChildProcess): void {
    if (this.process !== proc) return;
    this.process = undefined;
    const open = [...this.children.values()];
    this.children.clear();
    for (const child of open) child.fail('the step spawner exited');
  }
}

/** One child of the spawner, seen from run-service. */
class RemoteChild implements StepChild {
  pid: number | undefined;
  paused = false;
  private ended = false;
  /** Set by `watch`, right after `spawn` returned: the spawner's answers arrive in later ticks. */
  private listener: StepChildListener | undefined;

  constructor(
    private readonly id: number,
    private readonly post: (message: ToSpawner) => void,
  ) {}

  watch(listener: StepChildListener): void {
    this.listener = listener;
  }

  receive(message: FromSpawner): void {
    const listener = this.listener;
    if (listener === undefined) return;
    switch (message.t) {
      case 'started':
        this.pid = message.pid;
        return listener.started();
      case 'out':
        return listener.output(message.fd, message.data);
      case 'exit':
        return listener.exit();
      case 'close':
        this.ended = true;
        return listener.close(message.code, message.signal);
      case 'error':
        this.ended = true;
        return listener.error(message.message);
    }
  }

  /** Ends this child with `error` (its group killed first). */
  fail(message: string): void {
    if (this.ended) return;
    this.ended = true;
    if (this.pid !== undefined) {
      try {
        process.kill(-this.pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    // Never synchronously: the runner watches right after `spawn` returns.
    process.nextTick(() => this.listener?.error(message));
  }

  pause(): void {
    if (this.paused || this.ended) return;
    this.paused = true;
    this.post({ t: 'pause', id: this.id });
  }

  resume(): void {
    if (!this.paused || this.ended) return;
    this.paused = false;
    this.post({ t: 'resume', id: this.id });
  }

  closePipes(): void {
    if (!this.ended) this.post({ t: 'close_pipes', id: this.id });
  }
}
