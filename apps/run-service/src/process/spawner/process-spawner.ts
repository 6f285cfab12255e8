import { fork, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { StepChild, StepChildListener, StepIdentity, StepSpawner } from '../../core/step-launch';
import type { FromSpawner, ToSpawner } from './spawner-protocol';

/**
 * run-service's side of the step process spawner (`spawner-main.ts`;
 * docs/decisions.md "Steps start from a small spawner process").
 *
 * One spawner process is forked when this is created and again on the next
 * start after it died. Each {@link StepChild} it hands out mirrors one child
 * of the spawner: `pid` once `started` arrives (the runner kills the group
 * with `process.kill(-pid)` itself), output chunks, `exit` and `close`. When
 * the spawner dies, every child still open ends with an `error` ("the step
 * spawner exited") after its group was killed, so no step hangs.
 *
 * The spawner keeps run-service's event loop alive only while one of its
 * children is open; when run-service exits, the channel closes and the
 * spawner kills what it started and exits.
 */
export class ProcessSpawner implements StepSpawner {
  private process: ChildProcess | undefined;
  private nextId = 1;
  private readonly children = new Map<number, RemoteChild>();

  private readonly entry: string;

  /**
   * Forks the spawner now (so the first step does not wait for it).
   *
   * @param opts.identity the step user (`RUN_STEP_USER`): every child runs as it; default: as run-service
   * @param opts.setpriv  util-linux `setpriv`: the spawner starts under `setpriv --no-new-privs`
   *                      (required with an identity, docs/security.md); default: forked directly
   * @param opts.entry    the spawner script (default: `spawner-main.js` beside this file; a `.ts`
   *                      entry runs through the repo's test register)
   * @throws Error with an identity but no `setpriv`
   */
  constructor(private readonly opts: { identity?: StepIdentity; setpriv?: string; entry?: string } = {}) {
    if (opts.identity !== undefined && opts.setpriv === undefined)
      throw new Error('the step spawner needs util-linux setpriv to start steps as the step user');
    this.entry = opts.entry ?? defaultEntry();
    this.ensureProcess();
  }

  /** Starts `file args` in the spawner; never throws (a failure arrives as the child's `error`). */
  spawn(
    file: string,
    args: readonly string[],
    opts: { cwd: string; env: Readonly<Record<string, string>> },
  ): StepChild {
    const id = this.nextId++;
    const child = new RemoteChild(id, (message) => this.post(message));
    this.children.set(id, child);
    // While a child is open the channel keeps the event loop alive (its answers are awaited).
    if (this.children.size === 1) this.process?.channel?.ref();
    this.post({ t: 'spawn', id, file, args: [...args], cwd: opts.cwd, env: { ...opts.env } });
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
    const proc = this.ensureProcess();
    if (!proc.connected) {
      this.children.get(message.id)?.fail('the step spawner is not running');
      return;
    }
    proc.send(message);
  }

  private ensureProcess(): ChildProcess {
    if (this.process !== undefined && this.process.exitCode === null && this.process.signalCode === null)
      return this.process;
    // Its own small heap: what makes its forks cheap.
    const execArgv = [...(this.entry.endsWith('.ts') ? ['-r', testRegister()] : []), '--max-old-space-size=64'];
    const { identity, setpriv } = this.opts;
    const args = identity !== undefined ? ['--uid', String(identity.uid), '--gid', String(identity.gid)] : [];
    const options = {
      env: { PATH: process.env.PATH ?? '' },
      serialization: 'advanced' as const,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'] as ['ignore', 'inherit', 'inherit', 'ipc'],
    };
    const proc =
      setpriv === undefined
        ? fork(this.entry, args, { ...options, execArgv })
        : spawn(setpriv, ['--no-new-privs', '--', process.execPath, ...execArgv, this.entry, ...args], options);
    proc.on('message', (message: FromSpawner) => this.receive(message));
    proc.on('exit', () => this.lost(proc));
    proc.on('error', () => this.lost(proc));
    proc.unref();
    proc.channel?.unref();
    this.process = proc;
    return proc;
  }

  private receive(message: FromSpawner): void {
    const child = this.children.get(message.id);
    if (child === undefined) return;
    if (message.t === 'close' || message.t === 'error') {
      this.children.delete(message.id);
      if (this.children.size === 0) this.process?.channel?.unref();
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
        return listener.output(
          message.fd,
          Buffer.from(message.data.buffer, message.data.byteOffset, message.data.byteLength),
        );
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

function defaultEntry(): string {
  const js = join(__dirname, 'spawner-main.js');
  return existsSync(js) ? js : join(__dirname, 'spawner-main.ts');
}

function testRegister(): string {
  return join(__dirname, '..', '..', '..', '..', '..', 'packages', 'bus', 'test-fixtures', 'ts-register.js');
}
