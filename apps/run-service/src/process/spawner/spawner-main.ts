/**
 * The step process spawner: a small Node process run-service forks once and
 * asks to start every step process (docs/decisions.md "Steps start from a
 * small spawner process").
 *
 * Why a process of its own: Node starts a child with fork + exec, and fork
 * copies the parent's page tables, so its cost grows with the parent's
 * resident memory (≈ 0.9 ms at 50 MB, 4 ms at 260 MB, 16 ms at 1.1 GB on the
 * bench machine) and it blocks the parent's event loop all along. This
 * process loads nothing but `node:child_process`, stays small, and takes that
 * cost off run-service's thread.
 *
 * It imports nothing of the repo on purpose (it must stay small). It starts
 * what it is told, each child leading its own process group, and relays
 * output, exit and close (`spawner-protocol.ts`).
 *
 * The step user (docs/security.md "Step isolation and secrets at rest"):
 * with `--uid U --gid G` every child is started as that user (the spawn sets
 * the gid, clears the supplementary groups and sets the uid before exec).
 * run-service starts this process under `setpriv --no-new-privs`, so every
 * child inherits "no new privileges" without a `setpriv` exec of its own
 * (that exec cost ≈ 1.2 ms per step).
 *
 * When run-service goes away (the IPC channel closes: a stop, a crash, a
 * kill -9) it kills every group it started and exits, so no step outlives
 * run-service.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { FromSpawner, ToSpawner } from './spawner-protocol';

/** Sends queued beyond this pause every child's output until the channel drains (backpressure). */
const MAX_PENDING_SENDS = 256;

/** `--uid U --gid G` from the argv: the step user every child runs as; absent: as this process. */
function identityFromArgv(argv: readonly string[]): { uid: number; gid: number } | undefined {
  const at = (flag: string): number | undefined => {
    const index = argv.indexOf(flag);
    const value = index >= 0 ? Number(argv[index + 1]) : NaN;
    return Number.isInteger(value) && value >= 0 ? value : undefined;
  };
  const uid = at('--uid');
  const gid = at('--gid');
  return uid !== undefined && gid !== undefined ? { uid, gid } : undefined;
}

const identity = identityFromArgv(process.argv.slice(2));
const children = new Map<number, ChildProcess>();
const pausedByRunService = new Set<number>();
let pendingSends = 0;
let channelFull = false;

function send(message: FromSpawner): void {
  if (process.send === undefined || !process.connected) return;
  pendingSends++;
  process.send(message, undefined, {}, () => {
    pendingSends--;
    if (channelFull && pendingSends < MAX_PENDING_SENDS / 2) {
      channelFull = false;
      for (const [id, child] of children) if (!pausedByRunService.has(id)) resumeChild(child);
    }
  });
  if (!channelFull && pendingSends >= MAX_PENDING_SENDS) {
    channelFull = true;
    for (const child of children.values()) pauseChild(child);
  }
}

function pauseChild(child: ChildProcess): void {
  child.stdout?.pause();
  child.stderr?.pause();
}

function resumeChild(child: ChildProcess): void {
  child.stdout?.resume();
  child.stderr?.resume();
}

function start(message: Extract<ToSpawner, { t: 'spawn' }>): void {
  const { id } = message;
  let child: ChildProcess;
  try {
    child = spawn(message.file, message.args, {
      cwd: message.cwd,
      env: message.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...identity,
    });
  } catch (error) {
    send({ t: 'error', id, message: error instanceof Error ? error.message : String(error) });
    return;
  }
  children.set(id, child);
  if (child.pid !== undefined) send({ t: 'started', id, pid: child.pid });
  if (channelFull) pauseChild(child);
  child.stdout?.on('data', (data: Buffer) => send({ t: 'out', id, fd: 1, data }));
  child.stderr?.on('data', (data: Buffer) => send({ t: 'out', id, fd: 2, data }));
  child.on('error', (error: Error) => {
    // A start failure (ENOENT, EACCES): no pid, no exit; the child is done.
    if (child.pid === undefined) {
      children.delete(id);
      send({ t: 'error', id, message: error.message });
    }
  });
  child.on('exit', () => send({ t: 'exit', id }));
  child.on('close', (code: number | null, signal: NodeJS.Signals | null) => {
    children.delete(id);
    pausedByRunService.delete(id);
    send({ t: 'close', id, code, signal });
  });
}

function killAll(): void {
  for (const child of children.values()) {
    if (child.pid === undefined) continue;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // The group is gone already.
    }
  }
}

process.on('message', (message: ToSpawner) => {
  const child = message.t === 'spawn' ? undefined : children.get(message.id);
  switch (message.t) {
    case 'spawn':
      return start(message);
    case 'pause':
      pausedByRunService.add(message.id);
      if (child !== undefined) pauseChild(child);
      return;
    case 'resume':
      pausedByRunService.delete(message.id);
      if (child !== undefined && !channelFull) resumeChild(child);
      return;
    case 'close_pipes':
      child?.stdout?.destroy();
      child?.stderr?.destroy();
      return;
  }
});
process.on('disconnect', () => {
  killAll();
  process.exit(0);
});
// A signal sent to run-service's whole process group (Ctrl-C in a terminal, a group kill) must not
// kill the steps before run-service hands them back: this process ends when run-service does.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => undefined);
