import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import {
  DaguError,
  RUN_STATUS_LABELS,
  dagOps,
  defineOps,
  runEventsChannel,
  runOps,
  type RunDetail,
} from '@dagu-mcp/contracts';
import { ServiceWorker } from '@dagu-mcp/bus';

/**
 * Test double of dag-service (`dag.spec`, `dag.get`) and run-service (every
 * run op) on the real bus, for the gateway's integration tests. A run's
 * behaviour follows its spec text: `sleep` stays running, `approval` parks at
 * status 7, `fail` ends failed, anything else succeeds ~150 ms after it starts.
 * Every status change is PUBLISHed as a `RunEvent`, like run-service does.
 */

const dagCatalog = defineOps({ 'dag.spec': dagOps['dag.spec'], 'dag.get': dagOps['dag.get'] });

interface FakeRun {
  dagName: string;
  dagRunId: string;
  attemptId: string;
  status: number;
  spec: string;
}

/** A recorded bus call: the op and its payload as the service received it. */
export interface RecordedCall {
  readonly op: string;
  readonly payload: unknown;
}

export class FakeServices {
  readonly calls: RecordedCall[] = [];
  readonly dags = new Map<string, string>();
  private readonly runs = new Map<string, FakeRun>();
  private readonly publisher: Redis;
  private readonly workers: Array<{ start(): Promise<void>; close(): Promise<void> }>;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    redisUrl: string,
    private readonly prefix: string,
  ) {
    this.publisher = new Redis(redisUrl);
    const record = (op: string, payload: unknown): void => {
      this.calls.push({ op, payload });
    };
    const dagWorker = new ServiceWorker({
      service: 'dag',
      catalog: dagCatalog,
      redisUrl,
      prefix,
      handlers: {
        'dag.spec': async (p) => {
          record('dag.spec', p);
          return { name: p.name, mimeType: 'application/yaml' as const, spec: this.storedSpec(p.name), errors: [] };
        },
        'dag.get': async (p) => {
          record('dag.get', p);
          this.storedSpec(p.name);
          const now = new Date().toISOString();
          return {
            name: p.name,
            specUri: `dagu://dags/${p.name}/spec`,
            suspended: false,
            labels: [],
            schedule: [],
            version: 1,
            createdAt: now,
            updatedAt: now,
            dag: {},
          };
        },
      },
    });
    const runWorker = new ServiceWorker({
      service: 'run',
      catalog: runOps,
      redisUrl,
      prefix,
      handlers: {
        ping: async () => ({ service: 'run-service', replica: 'fake', at: new Date().toISOString() }),
        'run.start': async (p) => {
          record('run.start', p);
          if (p.inline && p.spec === undefined)
            throw new DaguError('invalid_tool_input', 'An inline start needs the spec to run.', { field: 'spec' });
          if (
            p.singleton === true &&
            [...this.runs.values()].some((r) => r.dagName === p.dagName && [1, 5].includes(r.status))
          ) {
            throw new DaguError('conflict', `A run of ${p.dagName} is already running or queued.`);
          }
          const run: FakeRun = {
            dagName: p.dagName,
            dagRunId: p.dagRunId ?? `r${randomUUID().slice(0, 8)}`,
            attemptId: randomUUID(),
            status: p.enqueue ? 5 : 1,
            // By name, as run-service does: the stored YAML, or dag-service's resource_not_found.
            spec: p.spec ?? this.storedSpec(p.dagName),
          };
          this.runs.set(run.dagRunId, run);
          if (!p.enqueue) this.play(run);
          return this.ref(run);
        },
        'run.retry': async (p) => {
          record('run.retry', p);
          const run = this.run(p.dagRunId);
          run.attemptId = randomUUID();
          run.spec = 'echo retried';
          this.setStatus(run, 1);
          this.play(run);
          return this.ref(run);
        },
        'run.stop': async (p) => {
          record('run.stop', p);
          const run = this.run(p.dagRunId);
          if (![1, 7].includes(run.status)) throw new DaguError('invalid_tool_input', 'The run is not running.');
          this.later(() => this.setStatus(run, 3), 50);
          return this.ref(run);
        },
        'run.get': async (p) => {
          record('run.get', p);
          return this.detail(this.run(p.dagRunId));
        },
        'run.list': async (p) => {
          record('run.list', p);
          return {
            items: [...this.runs.values()].map((r) => ({
              name: r.dagName,
              dagRunId: r.dagRunId,
              uri: `dagu://runs/${r.dagName}/${r.dagRunId}`,
              status: r.status,
              statusLabel: label(r.status),
            })),
          };
        },
        'run.logs': async (p) => {
          record('run.logs', p);
          return { schedulerLog: { content: 'start\n', lineCount: 1, totalLines: 1, hasMore: false }, stepLogs: [] };
        },
        'run.stepLog': async (p) => {
          record('run.stepLog', p);
          return { stdoutContent: 'hello\n', stderrContent: '', lineCount: 1, totalLines: 1, hasMore: false };
        },
        'run.latest': async (p) => {
          record('run.latest', p);
          const latest: Record<string, { dagRunId: string; status: number; statusLabel: string }> = {};
          for (const r of this.runs.values())
            if (p.dagNames.includes(r.dagName))
              latest[r.dagName] = { dagRunId: r.dagRunId, status: r.status, statusLabel: label(r.status) };
          return { latest };
        },
        'run.humanTask': async (p) => {
          record('run.humanTask', p);
          const run = this.run(p.dagRunId);
          this.setStatus(run, 1);
          return this.ref(run);
        },
        'run.foreachItems': async (p) => {
          record('run.foreachItems', p);
          return { total: 0, counts: { notStarted: 0, running: 0, succeeded: 0, failed: 0, aborted: 0 }, items: [] };
        },
        'run.foreachItem': async (p) => {
          record('run.foreachItem', p);
          throw new DaguError('resource_not_found', `No item ${p.item}.`);
        },
        'run.workbook': async (p) => {
          record('run.workbook', { path: p.path });
          throw new DaguError('resource_not_found', `${p.path}: workbook not found`);
        },
        // Runtime profiles (Dagu spec 022b): none exist in the fake.
        'profile.list': async (p) => ({ workspace: p.workspace, defaultProfile: null, profiles: [] }),
        'profile.get': async (p) => {
          throw new DaguError('resource_not_found', `Runtime profile ${p.profile} does not exist.`, {
            field: 'profile',
          });
        },
        'profile.put': async () => {
          throw new DaguError('unauthorized', 'The fake run-service keeps no profiles.');
        },
        'profile.delete': async (p) => {
          throw new DaguError('resource_not_found', `Runtime profile ${p.profile} does not exist.`, {
            field: 'profile',
          });
        },
        'profile.setDefault': async (p) => ({ workspace: p.workspace, defaultProfile: null }),
        'profile.assign': async (p) => ({ dagName: p.dagName, profile: p.profile }),
        'profile.ofDag': async (p) => ({
          dagName: p.dagName,
          configuredProfile: null,
          effectiveProfile: null,
          source: 'none' as const,
        }),
        'run.approval': async (p) => {
          record('run.approval', p);
          const run = this.run(p.dagRunId);
          this.setStatus(run, p.decision === 'reject' ? 8 : 1);
          return this.ref(run);
        },
      },
    });
    this.workers = [dagWorker, runWorker];
  }

  async start(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.start()));
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    await Promise.all(this.workers.map((w) => w.close()));
    await this.publisher.quit();
  }

  /** Calls of one op, in order. */
  callsOf(op: string): unknown[] {
    return this.calls.filter((c) => c.op === op).map((c) => c.payload);
  }

  private storedSpec(name: string): string {
    const spec = this.dags.get(name);
    if (spec === undefined) {
      const close = [...this.dags.keys()].filter((n) => n.startsWith(name.slice(0, 3)));
      throw new DaguError(
        'resource_not_found',
        `DAG "${name}" does not exist.`,
        close.length > 0 ? { details: { didYouMean: close } } : {},
      );
    }
    return spec;
  }

  private run(dagRunId: string): FakeRun {
    const run = this.runs.get(dagRunId);
    if (run === undefined) throw new DaguError('resource_not_found', `Run ${dagRunId} does not exist.`);
    return run;
  }

  private play(run: FakeRun): void {
    if (run.spec.includes('sleep')) return;
    const status = run.spec.includes('approval') ? 7 : run.spec.includes('fail') ? 2 : 4;
    this.later(() => this.setStatus(run, status), 150);
  }

  private later(fn: () => void, ms: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
  }

  private setStatus(run: FakeRun, status: number): void {
    run.status = status;
    const event = {
      name: run.dagName,
      dagRunId: run.dagRunId,
      attemptId: run.attemptId,
      status,
      statusLabel: label(status),
      at: new Date().toISOString(),
    };
    void this.publisher.publish(runEventsChannel(this.prefix), JSON.stringify(event));
  }

  private ref(run: FakeRun) {
    return {
      dagName: run.dagName,
      dagRunId: run.dagRunId,
      attemptId: run.attemptId,
      status: run.status,
      statusLabel: label(run.status),
    };
  }

  private detail(run: FakeRun): RunDetail {
    const uri = `dagu://runs/${run.dagName}/${run.dagRunId}`;
    return {
      name: run.dagName,
      dagRunId: run.dagRunId,
      uri,
      logsUri: `${uri}/logs`,
      attemptId: run.attemptId,
      status: run.status,
      statusLabel: label(run.status),
      steps: [],
    };
  }
}

function label(status: number): string {
  return RUN_STATUS_LABELS[status] ?? 'not_started';
}
