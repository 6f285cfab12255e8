/**
 * The messages between run-service and its process spawner
 * (`spawner-main.ts`, docs/decisions.md "Steps start from a small spawner
 * process"), sent over the Node IPC channel with `serialization: 'advanced'`
 * (structured clone: output chunks travel as bytes, not JSON).
 *
 * Every child is named by an `id` run-service chose; its real pid comes back
 * in `started`. Per child the spawner sends, in this order: `started` or
 * `error`, any number of `out`, `exit` (the process ended, its pipes may still
 * be open), `close` (exited and both pipes closed). IPC keeps that order.
 */

/** run-service → spawner. */
export type ToSpawner =
  | {
      t: 'spawn';
      id: number;
      file: string;
      args: string[];
      cwd: string;
      env: Record<string, string>;
    }
  /** Stop reading the child's pipes (run-service's log buffer is full), or read again. */
  | { t: 'pause'; id: number }
  | { t: 'resume'; id: number }
  /** Close the child's pipes now (a background process still holds them after the child exited). */
  | { t: 'close_pipes'; id: number };

/** spawner → run-service. */
export type FromSpawner =
  | { t: 'started'; id: number; pid: number }
  | { t: 'error'; id: number; message: string }
  | { t: 'out'; id: number; fd: 1 | 2; data: Uint8Array }
  | { t: 'exit'; id: number }
  | { t: 'close'; id: number; code: number | null; signal: string | null };
