import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { JsonRpcError } from './protocol';

/** A client's answer to a server→client request (`sampling/createMessage`, `elicitation/create`, `roots/list`). */
export interface ClientResponse {
  readonly id: RequestId;
  readonly result?: Record<string, unknown>;
  readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown };
}

interface Pending {
  readonly sid: string;
  readonly resolve: (result: Record<string, unknown>) => void;
  readonly reject: (error: Error) => void;
}

/** Code of the error a wait rejects with when its deadline passes (the SDK's `RequestTimeout`). */
export const CLIENT_TIMEOUT_CODE = -32001;

/**
 * The server→client requests this replica awaits. Ids are minted as
 * `s-<replica id>-<sequence>` so that the replica receiving the client's
 * POSTed response knows where to forward it (replica-hub.ts). A response is
 * only accepted from the session the request was sent to.
 */
export class ClientAwaits {
  private sequence = 0;
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly replicaId: string) {}

  /** The replica that minted `id`, or `undefined` when the id is not a gateway request id. */
  static ownerOf(id: RequestId): string | undefined {
    if (typeof id !== 'string') return undefined;
    return /^s-([0-9a-f]{12})-\d+$/.exec(id)?.[1];
  }

  /** A fresh request id owned by this replica. */
  mint(): string {
    this.sequence += 1;
    return `s-${this.replicaId}-${this.sequence}`;
  }

  get size(): number {
    return this.pending.size;
  }

  /**
   * Waits for the client's response to request `id` of session `sid`.
   *
   * @param timeoutMs how long to wait, ms
   * @param signal    aborts the wait (the originating request was cancelled or its session ended)
   * @returns the response's `result`
   * @throws JsonRpcError with the client's error, or `-32001` on timeout; the abort reason on abort
   */
  wait(sid: string, id: string, timeoutMs: number, signal: AbortSignal): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const finish = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.pending.delete(id);
      };
      const onAbort = (): void => {
        finish();
        reject(new Error('The request was cancelled.'));
      };
      const timer = setTimeout(() => {
        finish();
        reject(new JsonRpcError(CLIENT_TIMEOUT_CODE, `The client did not answer ${id} within ${timeoutMs} ms.`));
      }, timeoutMs);
      timer.unref();
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, {
        sid,
        resolve: (result) => {
          finish();
          resolve(result);
        },
        reject: (error) => {
          finish();
          reject(error);
        },
      });
    });
  }

  /** Settles the wait for `response.id` when it belongs to `sid`; other responses are ignored. */
  settle(sid: string, response: ClientResponse): void {
    const pending = typeof response.id === 'string' ? this.pending.get(response.id) : undefined;
    if (pending === undefined || pending.sid !== sid) return;
    if (response.error !== undefined)
      pending.reject(new JsonRpcError(response.error.code, response.error.message, response.error.data));
    else pending.resolve(response.result ?? {});
  }

  /** Rejects every wait of one session (it ended). */
  rejectSession(sid: string, error: Error): void {
    for (const pending of [...this.pending.values()]) if (pending.sid === sid) pending.reject(error);
  }

  /** Rejects every wait (shutdown). */
  rejectAll(error: Error): void {
    for (const pending of [...this.pending.values()]) pending.reject(error);
  }
}
