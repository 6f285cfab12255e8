import type { SecretSource } from '../store/profile-env';
import type { RunRef } from '@dagu-mcp/contracts';
import type { Logger, Pool, ReadRouter } from '@dagu-mcp/runtime';
import { runStatusLabel } from '@dagu-mcp/contracts';
import type { RunConfig } from '../config/run-config';
import type { RunEngine } from '../engine/run-engine';
import type { RunEventPublisher } from '../events/run-event-publisher';
import type { RunMetrics } from '../events/run-metrics';
import type { StoredDagSpecs } from './stored-dag-specs';

/**
 * What the run operations (the domain functions behind the bus handlers)
 * work with. Built once per replica in `run-service.ts`.
 */
export interface RunDeps {
  readonly pool: Pool;
  /** Lag-tolerant reads on the replica (`DATABASE_READ_URL`); absent: every read on `pool`. */
  readonly reads?: ReadRouter;
  readonly engine: RunEngine;
  readonly publisher: RunEventPublisher;
  /** Tells the replica that owns run `pk` to stop it (cross-replica stop). */
  readonly requestRemoteStop: (pk: number) => Promise<void>;
  readonly replica: string;
  readonly config: RunConfig;
  readonly logger: Logger;
  /** Run metrics (checkpoint waits, scheduler lag); absent in tests that need none. */
  readonly metrics?: RunMetrics;
  /** Stored DAG YAML for a start by name (read from dag-service, cached). */
  readonly storedSpecs: Pick<StoredDagSpecs, 'spec'>;
  /** The key ring of secret profile values (Dagu spec 022b); absent in tests that use no profile. */
  readonly secrets?: SecretSource;
}

/** The `RunRef` reply of a control action (contracts `RunRefSchema`). */
export function runRefOf(run: { dagName: string; dagRunId: string; attemptId: string; status: number }): RunRef {
  return {
    dagName: run.dagName,
    dagRunId: run.dagRunId,
    attemptId: run.attemptId,
    status: run.status,
    statusLabel: runStatusLabel(run.status),
  };
}

/** Resolves after `ms` (never rejects). */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** Waits for `promise` at most `ms`; the timer is cleared as soon as either settles. */
export async function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, ms))));
  try {
    await Promise.race([promise.then(() => undefined), timeout]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
