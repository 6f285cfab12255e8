import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

/**
 * Step process groups that outlive their replica: a step's
 * shell dies with run-service (the launcher's parent-death signal), but what
 * it started in the background (`sleep 100 &`, a daemon) is re-parented to
 * init and keeps running, while the recovery sweep fails the run and a retry
 * may start the same step again.
 *
 * Every step process leads a process group of its own (`process-runner.ts`
 * spawns it detached). This registry writes each group's id, as it starts and
 * ends, to a file of this process in `RUN_STATE_DIR` on local disk: one line
 * `+<pgid> <start time>` or `-<pgid>`, appended with `O_APPEND` (a write
 * that survives the death of the process, not of the host: a host that dies
 * takes its steps with it). The file is named `<host>-<pid>-<start time>`:
 * the host identity, and this process's pid and start time (clock ticks since
 * boot, `/proc/<pid>/stat`), so a pid reused by another process is told apart.
 *
 * When run-service starts it calls {@link killLeftoverStepGroups} before the
 * engine, the queue dispatcher or the recovery sweep start: every file of
 * this host whose process is gone is read, each group still recorded as live
 * gets SIGKILL, and the file is deleted. Files of live run-service processes
 * on the same host (other replicas) are left alone. A group is not killed
 * when a process with the group's id now exists with another start time (the
 * id was reused by someone else).
 */

/** The start time of process `pid` in clock ticks since boot (`/proc/<pid>/stat` field 22), if readable. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) are space-separated; start time is field 22.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19];
  } catch {
    return undefined;
  }
}

/** True when `pid` exists (and is ours to signal, or is not: EPERM still means it exists). */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error instanceof Error && 'code' in error && error.code === 'EPERM';
  }
}

/** Records the step process groups of this process (see the module comment). */
export class StepGroupRegistry {
  private readonly file: string;
  private live = 0;

  constructor(private readonly dir: string) {
    this.file = join(dir, `${hostname()}-${process.pid}-${processStartTime(process.pid) ?? '0'}`);
    this.write(() => writeFileSync(this.file, '', { mode: 0o600 }));
  }

  /** A step process group started (its leader's pid is the group id). */
  started(pgid: number): void {
    this.live++;
    this.write(() => appendFileSync(this.file, `+${pgid} ${processStartTime(pgid) ?? '0'}\n`, { mode: 0o600 }));
  }

  /** A step process group's leader ended (its group is killed by the runner when it is stopped). */
  ended(pgid: number): void {
    this.live = Math.max(0, this.live - 1);
    // No group left: start the file over, so it never grows past the live groups of a busy replica.
    if (this.live === 0) this.write(() => writeFileSync(this.file, '', { mode: 0o600 }));
    else this.write(() => appendFileSync(this.file, `-${pgid}\n`, { mode: 0o600 }));
  }

  /**
   * Runs a write of the record; when the directory is missing (never made, or an operator
   * or a cleanup job emptied the work directory) it is created and the write tried once
   * more. The record serves only the clean-up after a crash, so losing it must never stop
   * a step or the process. No `mkdir` on the common path: this runs twice per step.
   */
  private write(op: () => void): void {
    try {
      op();
      return;
    } catch (error) {
      // Duck-typed: a core error need not be an instance of this realm's Error.
      if (typeof error !== 'object' || error === null || !('code' in error) || error.code !== 'ENOENT') return;
    }
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      op();
    } catch {
      // Given up: see above.
    }
  }

  /** Deletes this process's file (a clean stop: every step has ended). */
  close(): void {
    rmSync(this.file, { force: true });
  }
}

/** What {@link killLeftoverStepGroups} did. */
export interface LeftoverReport {
  /** Files of dead run-service processes of this host that were read and deleted. */
  files: number;
  /** Process groups that got SIGKILL. */
  killed: number[];
}

/**
 * Kills the step process groups left by dead run-service processes of this
 * host (see the module comment). Synchronous: it runs once at start, before
 * anything else of the engine. Never throws for an unreadable entry.
 */
export function killLeftoverStepGroups(dir: string): LeftoverReport {
  const report: LeftoverReport = { files: 0, killed: [] };
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return report; // first start: nothing recorded
  }
  const prefix = `${hostname()}-`;
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const [pid, start] = name.slice(prefix.length).split('-');
    if (pid === undefined || start === undefined) continue;
    const owner = Number(pid);
    if (owner === process.pid) continue;
    if (processExists(owner) && (processStartTime(owner) ?? start) === start) continue; // a live replica
    const path = join(dir, name);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      continue; // gone meanwhile (another replica of this host cleaned it up), or unreadable
    }
    for (const [pgid, leaderStart] of liveGroups(text)) {
      const now = processStartTime(pgid);
      if (now !== undefined && now !== leaderStart) continue; // the id belongs to another process now
      try {
        process.kill(-pgid, 'SIGKILL');
        report.killed.push(pgid);
      } catch {
        // The group is gone.
      }
    }
    rmSync(path, { force: true });
    report.files++;
  }
  return report;
}

/** The groups a registry file records as live: group id → its leader's start time. */
function liveGroups(text: string): Map<number, string> {
  const live = new Map<number, string>();
  for (const line of text.split('\n')) {
    const match = /^([+-])(\d+)(?: (\d+))?$/.exec(line);
    if (match === null) continue;
    const pgid = Number(match[2]);
    if (match[1] === '+') live.set(pgid, match[3] ?? '0');
    else live.delete(pgid);
  }
  return live;
}
