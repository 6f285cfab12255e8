import { Redis } from 'ioredis';
import {
  RunEventSchema,
  runEventsChannel,
  StepEventSchema,
  stepEventsChannel,
  type RunEvent,
  type StepEvent,
} from '@dagu-mcp/contracts';
import type { Logger } from '@dagu-mcp/runtime';

/**
 * Run status changes as they happen (036 §Wait: "reacts to status changes as
 * they happen"; dagu-model §8, §10). run-service PUBLISHes a `RunEvent`
 * (`{name, dagRunId, root?, attemptId?, status, statusLabel, at}`) on
 * `runEventsChannel(prefix)` whenever a run's status changes; the gateway
 * holds ONE subscriber connection for all of them and fans events out to
 * in-process listeners. Step events (`stepEventsChannel`)
 * come on the same connection and go to step listeners only.
 */

/** A watch on the runs of one DAG, opened before the action so no event is missed. */
export interface RunWatch {
  /**
   * Resolves `true` as soon as a matching event arrived since the previous
   * call (at once when one is already pending), `false` after `timeoutMs`
   * or when `signal` aborts.
   */
  changed(timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  /** Narrows the watch to one run once its id is known (events of other runs stop counting). */
  track(dagRunId: string): void;
  /** Stops listening. Idempotent. */
  close(): void;
}

/** Where run events come from; a fake in unit tests, {@link RunEventHub} in the gateway. */
export interface RunEventSource {
  /** Watches root-run events of `dagName` (of one run when `dagRunId` is given). */
  watch(dagName: string, dagRunId?: string): RunWatch;
}

/**
 * In-process fan-out of run events, keyed by DAG name. No I/O: the hub feeds
 * it, tests drive it with `publish`.
 */
export class RunEventDispatcher implements RunEventSource {
  private readonly listeners = new Map<string, Set<(event: RunEvent) => void>>();

  private readonly everyRun = new Set<(event: RunEvent) => void>();

  private readonly withChildren = new Set<(event: RunEvent) => void>();

  private readonly steps = new Set<(event: StepEvent) => void>();

  /**
   * Delivers one event to the listeners of its DAG name (child-run events carry `root` and are
   * skipped there; only {@link listenWithChildren} listeners see them).
   */
  publish(event: RunEvent): void {
    for (const listener of [...this.withChildren]) listener(event);
    if (event.root !== undefined) return;
    for (const listener of [...this.everyRun]) listener(event);
    for (const listener of [...(this.listeners.get(event.name) ?? [])]) listener(event);
  }

  /** Adds a raw listener for the root runs of `dagName`; returns its remover. */
  listen(dagName: string, listener: (event: RunEvent) => void): () => void {
    const set = this.listeners.get(dagName) ?? new Set();
    set.add(listener);
    this.listeners.set(dagName, set);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(dagName) === set) this.listeners.delete(dagName);
    };
  }

  /** Adds a raw listener for the root runs of every DAG (subscription relay); returns its remover. */
  listenAll(listener: (event: RunEvent) => void): () => void {
    this.everyRun.add(listener);
    return () => {
      this.everyRun.delete(listener);
    };
  }

  /** Adds a listener for the events of every run, child runs included (the console's event stream); returns its remover. */
  listenWithChildren(listener: (event: RunEvent) => void): () => void {
    this.withChildren.add(listener);
    return () => {
      this.withChildren.delete(listener);
    };
  }

  /** Delivers one step event to the step listeners. */
  publishStep(event: StepEvent): void {
    for (const listener of [...this.steps]) listener(event);
  }

  /** Adds a listener for step events of every run; returns its remover. */
  listenSteps(listener: (event: StepEvent) => void): () => void {
    this.steps.add(listener);
    return () => {
      this.steps.delete(listener);
    };
  }

  watch(dagName: string, dagRunId?: string): RunWatch {
    let tracked = dagRunId;
    let pending = false;
    let wake: (() => void) | undefined;
    const remove = this.listen(dagName, (event) => {
      if (tracked !== undefined && event.dagRunId !== tracked) return;
      pending = true;
      wake?.();
    });
    return {
      track: (id) => {
        tracked = id;
      },
      close: remove,
      changed: (timeoutMs, signal) =>
        new Promise<boolean>((resolve) => {
          const finish = (value: boolean): void => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', onAbort);
            wake = undefined;
            pending = false;
            resolve(value);
          };
          const onAbort = (): void => finish(false);
          const timer = setTimeout(() => finish(pending), Math.max(0, timeoutMs));
          if (pending) return finish(true);
          if (signal?.aborted === true) return finish(false);
          signal?.addEventListener('abort', onAbort, { once: true });
          wake = () => finish(true);
        }),
    };
  }
}

/** Options of {@link RunEventHub}. */
export interface RunEventHubOptions {
  readonly redisUrl: string;
  /** The bus prefix; the channel is `runEventsChannel(prefix)`. */
  readonly prefix: string;
  readonly logger: Logger;
}

/**
 * The gateway's one subscriber connection to run events. `start()` subscribes
 * (ioredis re-subscribes by itself after a reconnect); malformed messages are
 * logged and dropped.
 */
export class RunEventHub extends RunEventDispatcher {
  private redis: Redis | undefined;

  constructor(private readonly options: RunEventHubOptions) {
    super();
  }

  /** Connects and subscribes; resolves once subscribed (waits while Redis is down). */
  async start(): Promise<void> {
    const { redisUrl, prefix, logger } = this.options;
    const channel = runEventsChannel(prefix);
    const stepChannel = stepEventsChannel(prefix);
    const redis = new Redis(redisUrl, {
      connectionName: `${prefix}:gateway:run-events`,
      autoResubscribe: true,
      maxRetriesPerRequest: null,
      retryStrategy: (attempt: number) => Math.min(50 * 2 ** Math.min(attempt - 1, 10), 1000),
    });
    this.redis = redis;
    redis.on('error', (error: Error) => logger.debug({ error: error.message }, 'run-events connection error'));
    redis.on('message', (from: string, raw: string) =>
      from === stepChannel ? this.onStepMessage(raw) : this.onMessage(raw),
    );
    await redis.subscribe(channel, stepChannel);
  }

  /** Closes the subscriber connection. Idempotent. */
  async close(): Promise<void> {
    const redis = this.redis;
    this.redis = undefined;
    if (redis === undefined) return;
    try {
      await redis.quit();
    } catch {
      redis.disconnect(false);
    }
  }

  private onStepMessage(raw: string): void {
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      json = undefined;
    }
    const event = StepEventSchema.safeParse(json);
    if (!event.success) {
      this.options.logger.warn({ message: raw.slice(0, 200) }, 'step event is malformed');
      return;
    }
    this.publishStep(event.data);
  }

  private onMessage(raw: string): void {
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      json = undefined;
    }
    const event = RunEventSchema.safeParse(json);
    if (!event.success) {
      this.options.logger.warn({ message: raw.slice(0, 200) }, 'run event is malformed');
      return;
    }
    this.publish(event.data);
  }
}
