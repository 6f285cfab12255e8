/**
 * The shapes the console reads from the REST API (docs/rest-api.md; dagu-model §5 run detail,
 * 021 DAG collection/detail). Only the fields the pages use; the server sends more.
 */

import type { Role, RUN_STATUS_LABELS as CONTRACT_RUN_STATUS_LABELS } from '@dagu-mcp/contracts';

export type { Role };

const RANK: Record<Role, number> = { admin: 5, manager: 4, developer: 3, operator: 2, viewer: 1 };

/** A role named by the server (a step's `answer.role`), or `fallback` when it is not one. */
export function asRole(value: string | undefined, fallback: Role): Role {
  return value !== undefined && isRole(value) ? value : fallback;
}

function isRole(value: string): value is Role {
  return Object.prototype.hasOwnProperty.call(RANK, value);
}

/** True when `role` is `required` or above (dagu-model §9). */
export function roleAtLeast(role: Role, required: Role): boolean {
  return RANK[role] >= RANK[required];
}

/** `GET /api/v1/session`. */
export interface Session {
  user: { id: string; username: string; role: Role };
  csrfToken: string;
  expiresAt: string;
}

export interface DagSummary {
  name: string;
  suspended: boolean;
  description?: string;
  labels: string[];
  schedule: string[];
  nextRun?: string;
  updatedAt: string;
}

export interface ParamDef {
  name: string;
  default: string | null;
  description?: string;
  type?: 'string' | 'integer' | 'number' | 'boolean';
  enum?: string[];
  required?: boolean;
}

export interface DagStep {
  name: string;
  depends: string[];
  kind: string;
  description?: string;
  action?: { type: string; prompt?: string; form?: Record<string, unknown> };
  approval?: { prompt?: string; input: string[]; required: string[] };
}

export interface DagDetail extends DagSummary {
  version: number;
  dag: { steps?: DagStep[]; params?: ParamDef[] };
}

export interface RunSummary {
  name: string;
  dagRunId: string;
  status: number;
  statusLabel: string;
  startedAt?: string;
  finishedAt?: string;
}

export interface RunStep {
  name: string;
  status: number;
  statusLabel: string;
  startedAt?: string;
  finishedAt?: string;
  error?: string;
  outputs?: Record<string, unknown>;
  /** Child runs a `dag.run` step started (dagu-model §5), read under the root run. */
  subRuns?: Array<{ dagRunId: string; uri?: string; dagName?: string }>;
  /** Set on foreach steps that expanded items (dagu-model §5). */
  foreachUri?: string;
  answer?: { method: 'POST'; path: string; role: string };
  approval?: { prompt?: string; input?: string[]; required?: string[] };
  decision?: { by: Actor; at: string; outcome: string };
  foreach?: unknown;
}

/** Who started a run or decided a step (dagu-model §5 `startedBy`, a step's `decision.by`). */
export interface Actor {
  kind: string;
  name: string;
  onBehalfOf?: { kind: string; id: string; name: string };
}

/** An actor as one line: `ws/bot (agent) for alice` when an agent acted for a person. */
export function actorText(actor: Actor): string {
  const base = `${actor.name} (${actor.kind})`;
  return actor.onBehalfOf === undefined ? base : `${base} for ${actor.onBehalfOf.name}`;
}

export interface RunDetail extends RunSummary {
  attemptId?: string;
  params?: unknown;
  outputs?: Record<string, unknown>;
  /** dagu-model §5; `onBehalfOf`: the person a published agent acted for. */
  startedBy?: Actor;
  error?: string;
  steps: RunStep[];
}

export interface StepLog {
  stdoutContent: string;
  stderrContent: string;
  totalLines: number;
  hasMore: boolean;
}

export interface RunLogs {
  schedulerLog: { content?: string; lines?: string[] } & Record<string, unknown>;
}

/** Run statuses a run can still change from (live updates keep polling these). */
export const ACTIVE_STATUSES: ReadonlySet<number> = new Set([0, 1, 5, 7]);

/**
 * Status labels of runs, by int (dagu-model §1). A copy, so the bundle does not carry the
 * contracts' schemas; typed as the contracts' tuple, so it cannot drift from it.
 */
export const RUN_STATUS_LABELS: typeof CONTRACT_RUN_STATUS_LABELS = [
  'not_started',
  'running',
  'failed',
  'aborted',
  'succeeded',
  'queued',
  'partially_succeeded',
  'waiting',
  'rejected',
] as const;
