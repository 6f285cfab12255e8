import { type BusReply, type DaguError } from '@dagu-mcp/contracts';

interface PendingCall {
  resolve(reply: BusReply): void;
  reject(error: DaguError): void;
  timer: NodeJS.Timeout;
}

/**
 * The calls a BusClient is waiting on, by job id, each with its deadline timer.
 * Every call settles exactly once: by its reply, by its timer, or by
 * {@link PendingCalls.rejectAll} when the client closes; whichever is first
 * removes it, so a late reply finds nothing and is ignored.
 */
export class PendingCalls {
  private readonly calls = new Map<string, PendingCall>();

  /** How many calls are waiting. */
  get size(): number {
    return this.calls.size;
  }

  /**
   * Registers call `id` and returns the promise of its reply.
   *
   * @param timeoutMs - ms until the call rejects with `onTimeout()`'s error.
   * @param onTimeout - builds the error the call rejects with at its deadline.
   * @throws Error when `id` is already pending (ids are random UUIDs; a clash is a bug).
   */
  register(id: string, timeoutMs: number, onTimeout: () => DaguError): Promise<BusReply> {
    if (this.calls.has(id)) throw new Error(`A bus call with id ${id} is already pending.`);
    return new Promise<BusReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this.calls.delete(id)) reject(onTimeout());
      }, timeoutMs);
      this.calls.set(id, { resolve, reject, timer });
    });
  }

  /**
   * Settles call `id` with its reply.
   *
   * @returns false when the call is unknown: already timed out, or not ours.
   */
  resolve(id: string, reply: BusReply): boolean {
    const call = this.take(id);
    if (call === undefined) return false;
    call.resolve(reply);
    return true;
  }

  /**
   * Rejects call `id` (its job could not be sent, say).
   *
   * @returns false when the call is unknown.
   */
  reject(id: string, error: DaguError): boolean {
    const call = this.take(id);
    if (call === undefined) return false;
    call.reject(error);
    return true;
  }

  /** Rejects every waiting call with `error` and clears their timers. */
  rejectAll(error: DaguError): void {
    for (const id of [...this.calls.keys()]) this.reject(id, error);
  }

  private take(id: string): PendingCall | undefined {
    const call = this.calls.get(id);
    if (call === undefined) return undefined;
    this.calls.delete(id);
    clearTimeout(call.timer);
    return call;
  }
}
