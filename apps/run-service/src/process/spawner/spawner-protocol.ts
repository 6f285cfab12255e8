import { constants } from 'node:os';
import type { SpawnAs } from '../../core/step-launch';

/**
 * The frames between run-service and its step spawner (`native/step-spawner.c`;
 * docs/decisions.md "Steps start from a small spawner process"), over the
 * spawner's stdin (run-service → spawner) and stdout (spawner → run-service).
 *
 * A frame is a little-endian u32 byte length of what follows, a u8 type, a
 * u32 child id (run-service chooses it), then the payload. Every child is
 * named by its id; its real pid comes back in `started`. Per child the
 * spawner sends, in this order: `started` or `error`, any number of `out`,
 * `exit` (the process ended, its pipes may still be open), `close` (exited
 * and both pipes closed). The pipe keeps that order.
 */

/** run-service → spawner. */
export type ToSpawner =
  | {
      t: 'spawn';
      id: number;
      file: string;
      args: readonly string[];
      cwd: string;
      env: Readonly<Record<string, string>>;
      /** The child's uid, gid, umask and limits; absent: the spawner's `--uid`/`--gid`. */
      as?: SpawnAs;
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
  | { t: 'out'; id: number; fd: 1 | 2; data: Buffer }
  | { t: 'exit'; id: number }
  | { t: 'close'; id: number; code: number | null; signal: string | null };

const TO_TYPE = { spawn: 1, pause: 2, resume: 3, close_pipes: 4 } as const;
const FROM_STARTED = 1;
const FROM_ERROR = 2;
const FROM_STDOUT = 3;
const FROM_STDERR = 4;
const FROM_EXIT = 5;
const FROM_CLOSE = 6;
/** The largest frame the spawner takes (its `MAX_FRAME`), bytes. */
export const MAX_SPAWN_FRAME = 64 * 1024 * 1024;
/** The spawner's `close` code when the child was ended by a signal. */
const NO_CODE = 0xffffffff;

/**
 * Encodes one message as a frame.
 *
 * spawn payload: `file` NUL `cwd` NUL, u32 argc, argc × (arg NUL), u32 envc,
 * envc × (`KEY=value` NUL); with `as`: u32 uid, u32 gid, u32 umask, u32
 * nlimits, nlimits × (u32 resource, u64 limit as two u32, low first). A NUL inside a value cannot cross exec; it is
 * refused here, as Node's spawn refuses it.
 *
 * @throws TypeError when a file, cwd, arg or env entry holds a NUL byte; RangeError when the frame
 *   would exceed {@link MAX_SPAWN_FRAME}
 */
export function encodeToSpawner(message: ToSpawner): Buffer {
  if (message.t !== 'spawn') {
    const frame = Buffer.allocUnsafe(9);
    frame.writeUInt32LE(5, 0);
    frame.writeUInt8(TO_TYPE[message.t], 4);
    frame.writeUInt32LE(message.id, 5);
    return frame;
  }
  const env = Object.entries(message.env).map(([key, value]) => `${key}=${value}`);
  const strings = [message.file, message.cwd, ...message.args, ...env];
  for (const s of strings) if (s.includes('\0')) throw new TypeError('a spawn argument holds a NUL byte');
  const limits = message.as === undefined ? [] : limitEntries(message.as);
  let size = 9 + 8 + (message.as === undefined ? 0 : 16 + 12 * limits.length);
  for (const s of strings) size += Buffer.byteLength(s) + 1;
  // The spawner ends on a larger frame; this step alone fails instead.
  if (size - 4 > MAX_SPAWN_FRAME) throw new RangeError(`a step's argv and environment exceed ${MAX_SPAWN_FRAME} bytes`);
  const frame = Buffer.allocUnsafe(size);
  frame.writeUInt32LE(size - 4, 0);
  frame.writeUInt8(TO_TYPE.spawn, 4);
  frame.writeUInt32LE(message.id, 5);
  let at = 9;
  const put = (s: string): void => {
    at += frame.write(s, at);
    frame[at++] = 0;
  };
  put(message.file);
  put(message.cwd);
  frame.writeUInt32LE(message.args.length, at);
  at += 4;
  for (const arg of message.args) put(arg);
  frame.writeUInt32LE(env.length, at);
  at += 4;
  for (const entry of env) put(entry);
  if (message.as !== undefined) {
    for (const n of [message.as.uid, message.as.gid, message.as.umask, limits.length]) at = frame.writeUInt32LE(n, at);
    for (const [resource, value] of limits) {
      at = frame.writeUInt32LE(resource, at);
      at = frame.writeUInt32LE(value % 2 ** 32, at);
      at = frame.writeUInt32LE(Math.floor(value / 2 ** 32), at);
    }
  }
  return frame;
}

/** Linux resource numbers (asm-generic/resource.h, the same on x86 and ARM). */
const RLIMIT = { cpu: 0, fsize: 1, nproc: 6, as: 9 } as const;

/** The limits of `as` that are set, as [resource, value] pairs. */
function limitEntries(as: SpawnAs): [number, number][] {
  const out: [number, number][] = [];
  const { maxCpuSeconds, maxFileBytes, maxProcesses, maxAddressBytes } = as.limits;
  if (maxCpuSeconds !== undefined) out.push([RLIMIT.cpu, maxCpuSeconds]);
  if (maxFileBytes !== undefined) out.push([RLIMIT.fsize, maxFileBytes]);
  if (maxProcesses !== undefined) out.push([RLIMIT.nproc, maxProcesses]);
  if (maxAddressBytes !== undefined) out.push([RLIMIT.as, maxAddressBytes]);
  return out;
}

const signalNames = new Map<number, string>(Object.entries(constants.signals).map(([name, n]) => [n, name]));

/**
 * Splits the spawner's stdout into messages. Feed it every chunk in order;
 * it calls `onMessage` once per whole frame. An `out` frame's data is a view
 * of the stream's chunk, which Node never reuses.
 */
export class SpawnerFrameReader {
  private pending: Buffer | undefined;

  constructor(private readonly onMessage: (message: FromSpawner) => void) {}

  /** @throws Error on a frame the protocol does not define (the spawner is then broken) */
  push(chunk: Buffer): void {
    let buf = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk]);
    this.pending = undefined;
    let at = 0;
    while (buf.length - at >= 4) {
      const len = buf.readUInt32LE(at);
      if (buf.length - at - 4 < len) break;
      this.onMessage(decode(buf.subarray(at + 4, at + 4 + len)));
      at += 4 + len;
    }
    if (at < buf.length) {
      buf = buf.subarray(at);
      // Keep a copy: the stream may reuse its chunk.
      this.pending = Buffer.from(buf);
    }
  }
}

function decode(frame: Buffer): FromSpawner {
  const type = frame[0];
  const id = frame.readUInt32LE(1);
  switch (type) {
    case FROM_STARTED:
      return { t: 'started', id, pid: frame.readUInt32LE(5) };
    case FROM_ERROR:
      return { t: 'error', id, message: frame.toString('utf8', 5) };
    case FROM_STDOUT:
    case FROM_STDERR:
      return { t: 'out', id, fd: type === FROM_STDOUT ? 1 : 2, data: frame.subarray(5) };
    case FROM_EXIT:
      return { t: 'exit', id };
    case FROM_CLOSE: {
      const code = frame.readUInt32LE(5);
      const signal = frame.readUInt32LE(9);
      return {
        t: 'close',
        id,
        code: code === NO_CODE ? null : code,
        signal: signal === 0 ? null : (signalNames.get(signal) ?? `SIG${signal}`),
      };
    }
    default:
      throw new Error(`the step spawner sent a frame of unknown type ${String(type)}`);
  }
}
