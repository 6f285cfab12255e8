import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { z } from 'zod';
import { AddressRanges, env, parseConfig } from '@dagu-mcp/runtime';
import type { ThreadBudget } from '@dagu-mcp/runtime';
import { parseMcpServers, type McpServerEntry } from './mcp-servers';
import { parseQueueList } from './queue-limits';
import { parseUidRange } from './uid-range';

/**
 * Settings of the run engine, parsed once at start next to the shared service
 * settings (CONTRIBUTING §8). Every variable is optional.
 *
 * | Variable | Meaning | Unit | Default |
 * | --- | --- | --- | --- |
 * | `RUN_QUEUE_CONCURRENCY` | runs of one queue (`default` or a DAG's `queue`) running at once, over all replicas, for queues not in `RUN_QUEUES` | runs | `8` |
 * | `RUN_QUEUES` | named queues with their own concurrency, `name:limit,…` (e.g. `default:4,nightly:1`) | list | empty |
 * | `RUN_SCHEDULER` | run the cron scheduler on this replica (every replica may: each tick starts one run) | flag | `true` |
 * | `RUN_SCHEDULE_TZ` | IANA zone of schedule expressions without `CRON_TZ=` | zone | `UTC` |
 * | `RUN_SCHEDULE_CHECK_MS` | how often due ticks are looked for | ms | `1000` |
 * | `RUN_SCHEDULE_REFRESH_MS` | how often the schedules are re-read from dag-service | ms | `5000` |
 * | `RUN_QUEUE_POLL_MS` | how often a replica looks for queued runs it may start | ms | `1000` |
 * | `RUN_HEARTBEAT_MS` | how often a replica stamps `heartbeat_at` of the runs it owns (and picks up stop requests) | ms | `5000` |
 * | `RUN_STOP_GRACE_MS` | on SIGTERM, how long running runs may still finish here; then their steps are killed and the run is handed back to the queue (finished steps kept, the rest runs again in a new attempt on another replica, or on this one when it restarts). Keep it plus `RUN_KILL_GRACE_MS` below the 25 s shutdown bound | ms | `15000` |
 * | `RUN_KILL_GRACE_MS` | after SIGTERM to a step's process group, wait this long before SIGKILL | ms | `5000` |
 * | `RUN_DEFAULT_SHELL` | shell of steps without `shell` (run as `<shell> -c <command>`) | path | `/bin/sh` |
 * | `RUN_STEP_UID_RANGE` | uids the runs' processes run as, `first-last`: each run takes one no other active run of this replica holds (numeric, no user entries needed; the group is the uid's number), so runs cannot read or write each other's files and `RUN_STEP_MAX_PROCESSES` is per run. Every step, script, command check and backtick substitution runs as it with `umask 077`, the run directory as `HOME`, working directory and `TMPDIR`; when the run ends its leftover processes are killed, its files in `/tmp` removed and its directory closed to later runs. Replicas sharing a host (one kernel) need disjoint ranges. run-service must run as root (capabilities SETUID, SETGID, KILL, CHOWN, FOWNER, DAC_OVERRIDE; docs/security.md "A uid per run"). Unset, with `RUN_STEP_USER` unset: steps run as run-service itself (developer machines only; a warning is logged) | uids | unset (`200000-265535` in the images, compose and Kubernetes) |
 * | `RUN_STEP_USER` | the older form of `RUN_STEP_UID_RANGE`: every run's processes run as this one Unix user (a one-uid range shared by all runs: no isolation between runs, and `RUN_STEP_MAX_PROCESSES` counts all of them together); ignored when `RUN_STEP_UID_RANGE` is set | name | unset |
 * | `RUN_STEP_MAX_PROCESSES` | most processes (threads count) a run's uid may have at once (`RLIMIT_NPROC`, per uid, hence per run with `RUN_STEP_UID_RANGE`); a fork past it fails with `EAGAIN`. Applies with a step uid only | processes | `256` |
 * | `RUN_STEP_MAX_ADDRESS_BYTES` | most address space of each step process (`RLIMIT_AS`); an allocation past it fails. Applies with a step uid only | bytes | unset (no limit) |
 * | `RUN_STEP_MAX_CPU_SECONDS` | most CPU time of each step process (`RLIMIT_CPU`); past it the process gets `SIGKILL`. Applies with a step uid only | s | unset (no limit) |
 * | `RUN_STEP_SPAWNER` | start step processes from the native step spawner (`native/step-spawner.c`, vfork + exec from a process under 1 MB; Node's own spawn forks run-service, whose cost grows with its memory and blocks its thread); `false`, or when the build had no C compiler: spawn them from run-service itself (docs/decisions.md "Steps start from a small spawner process") | flag | `true` |
 * | `RUN_STEP_SPAWNERS` | how many spawner processes start steps (with `RUN_STEP_SPAWNER`); a step goes to the one with the fewest open steps, so steps one at a time stay on one and concurrent ones spread (a spawner's thread is blocked while it starts one). 1 to 16 | count | `2` |
 * | `RUN_WORK_DIR` | base of per-run working directories (`<base>/<dag>/<run id>`) | path | `<os tmpdir>/dagu-mcp-runs` |
 * | `RUN_STEP_LOG_MAX_BYTES` | most output one try of a step stores, stdout and stderr together: past half of it only the latest quarter of each stream is kept in memory, and when the try ends a marker line `[dagu: N bytes of output dropped here …]` and that tail are stored (docs/reliability.md "Bounded output"); run-service's memory stays flat however much a step prints. At least 4096 | bytes | `16777216` (16 MiB) |
 * | `RUN_DIR_MAX_BYTES` | most disk a run's directory may take while the run runs (`du`, every `RUN_DIR_CHECK_MS`); past it the run fails with the reason and its directory is emptied when it ends. Also each step process's largest file (`RLIMIT_FSIZE`: a write past it fails, the writer gets `SIGXFSZ`), with a step uid. `0`: no bound (docs/reliability.md "Bounded disk") | bytes | `1073741824` (1 GiB) |
 * | `RUN_DIR_CHECK_MS` | how often a running run's directory is measured against `RUN_DIR_MAX_BYTES`. 100 to 60000 | ms | `1000` |
 * | `RUN_MIN_FREE_BYTES` | a run starts its steps only while the file system of `RUN_WORK_DIR` has this much free; below it a start is recorded `queued` (its mutation record and run-service's log say why), a claimed run waits before its first step (its scheduler log says why), and goes on once there is room, or is stopped. `0`: never waits | bytes | `268435456` (256 MiB) |
 * | `RUN_LOG_FLUSH_MS` | log lines are written to PostgreSQL at least this often | ms | `50` |
 * | `RUN_STATE_WRITE_MS` | step states of one run are written to PostgreSQL at most this often (the states saved meanwhile go in one write; a run-status change writes them at once); `0`: each write starts when the one before ended (docs/decisions.md "Step states written at most every 20 ms"). 0 to 1000 | ms | `20` |
 * | `RUN_LAUNCH_HOLD_MS` | a run started while other starts are being accepted waits until they are answered, at most this long, before it executes (a burst of starts is answered first; a start alone executes at once; docs/decisions.md "Starts answered before their runs execute"); `0`: never held. 0 to 5000 | ms | `500` |
 * | `RUN_LAUNCH_QUIET_MS` | runs held by `RUN_LAUNCH_HOLD_MS` go once no start has been in flight for this long (the starts of a burst arrive in waves; docs/decisions.md "Starts answered before their runs execute"); `0`: as soon as the last one is answered. 0 to 1000 | ms | `15` |
 * | `RUN_LOG_BATCH_LINES` | a log buffer this full is written at once | lines | `1000` |
 * | `RUN_LOG_READ_MAX_BYTES` | most UTF-8 bytes of one log stream in a log read; past it the read is cut (`truncated: true`) | bytes | `1048576` (1 MiB) |
 * | `RUN_HIST_RETENTION_DAYS` | finished runs older than this are deleted with their logs, for DAGs without `hist_retention_days` | days | `30` |
 * | `RUN_RETENTION_SWEEP_MS` | how often the retention sweep runs | ms | `3600000` |
 * | `RUN_METRICS_DAG_LABELS_MAX` | most distinct DAG names a replica uses as the `dag` label of its run metrics; runs of later DAGs are counted under `other` (a bounded label set) | names | `200` |
 * | `RUN_WORKBOOK_MAX_BYTES` | largest workbook file a `dagu_read target=workbook` reads; a bigger one is `resource_unavailable` | bytes | `26214400` (25 MiB) |
 * | `RUN_WORKBOOK_TIME_BUDGET_MS` | longest a workbook read may parse (in a worker thread; also bounded by the call's 30 s deadline); past it the read is `resource_unavailable` | ms | `20000` |
 * | `RUN_WORKBOOK_MEMORY_MB` | heap of the worker thread parsing one workbook; a workbook needing more is `resource_unavailable` | MiB | `256` |
 * | `RUN_SPEC_PARSE_THREAD_MIN_BYTES` | DAG specs a run starts from (inline specs, snapshots, sub-DAGs) at least this long (UTF-16 code units, about bytes) are parsed on a thread beside the event loop, smaller ones in place | characters | `65536` |
 * | `RUN_SPEC_PARSE_BUDGET_MS` | most time the thread may spend parsing one spec; past it the thread is ended and the start is refused as an invalid spec naming the bound | ms | `10000` |
 * | `RUN_SPEC_PARSE_MEMORY_MB` | heap cap of the spec-parsing thread; a spec needing more is refused the same way | MiB | `256` |
 * | `RUN_WORKBOOK_CONCURRENCY` | workbook reads parsed at once by one replica; more wait for a slot within their deadline | reads | `2` |
 * | `RUN_DB_OUTAGE_MAX_MS` | while PostgreSQL is unavailable, the engine keeps its writes (step states, log lines, a run's end) and retries them for this long; steps keep running meanwhile. Past it a run's end is given up (the run is failed once PostgreSQL is back) and buffered log lines are dropped | ms | `600000` (10 min) |
 * | `RUN_LOG_SPILL_AFTER_BYTES` | log text an attempt keeps in memory while PostgreSQL is unavailable; past it the buffered lines go to a file in `RUN_SPILL_DIR`, replayed in order when PostgreSQL is back | bytes | `8388608` (8 MiB) |
 * | `RUN_LOG_SPILL_MAX_BYTES` | most bytes of spilled log text per attempt; past it lines stay in memory until the attempt's 64 MiB log buffer is full, then the steps' output pipes are paused (the steps block on write) until PostgreSQL is back | bytes | `1073741824` (1 GiB) |
 * | `RUN_PRIVATE_DIR` | run-service's own directory, out of every step's reach (created at start, run-service's, mode 0711: steps pass through to the files given to them but can neither list nor write it): the default parent of `RUN_SPILL_DIR` and `RUN_STATE_DIR`, and of the attempts' scratch directories (output files, scripts) and run-service's own `TMPDIR`. Must not be inside `RUN_WORK_DIR`; best on a file system steps do not fill (its own volume in Kubernetes; docs/reliability.md) | path | `<os tmpdir>/dagu-mcp-run-service` |
 * | `RUN_SPILL_DIR` | directory of spilled log files (created on demand, mode 0700; a file is deleted once replayed). Must not be inside `RUN_WORK_DIR` | path | `<RUN_PRIVATE_DIR>/outage-spill` |
 * | `RUN_STATE_DIR` | local directory where each run-service process records its live step process groups; a replica that restarts on the same host kills the groups a dead one left there before it runs anything. Must not be inside `RUN_WORK_DIR` | path | `<RUN_PRIVATE_DIR>/replica-state` |
 * | `OUTBOUND_ALLOW_CIDRS` | comma-separated CIDR ranges (`10.20.0.0/16,127.0.0.0/8`) of non-public addresses (loopback, private, link-local, unique-local, …) the `http.request` steps may reach (checked after DNS resolution, in the action's helper process); empty: none. The same setting as agent-service's (docs/decisions.md "Dagu's built-in actions") | list | empty |
 * | `RUN_MCP_SERVERS` | the MCP servers `mcp.call` steps may name in `with.server`: JSON, name → URL or `{"url": …, "headers": {…}}` (Streamable HTTP). Header values may hold `${NAME}` references, resolved from the step's environment when the step runs, so secrets come from the run's runtime profile (`{"tools": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${TOOLS_TOKEN}"}}}`). Calls follow `OUTBOUND_ALLOW_CIDRS` | JSON | empty |
 * | `DAGU_ENCRYPTION_KEY` | key ring encrypting the secret values of runtime profiles (Dagu spec 022b) in PostgreSQL, the same ring as the gateway's: `id:base64key[,…]` or one bare base64 32-byte key; unset: a development key in the temp directory when `DATABASE_URL` is on this host (loopback), else writing or using a secret profile value fails with `resource_unavailable` | — |
 * | `DAG_SPEC_CACHE_MS` | how long this replica may use its copy of a stored DAG's YAML (read from dag-service's `dag.spec` for a start by name or a `dag.run` child) without reading it again; every change made through dag-service drops the copy before the change is answered (dag-service's `<BUS_PREFIX>:dag:changed` announcements, docs/decisions.md "DAG spec cache"), so this bounds only what nobody announced (direct SQL writes to `dags`); `0`: read dag-service on every start | ms | `5000` |
 * | `RUN_RECOVERY_GRACE_MS` | after this replica's recovery sweep reaches PostgreSQL again (or PostgreSQL restarted), it fails no run for a stale heartbeat during this long, so live replicas that could not write meanwhile stamp their heartbeats first | ms | `30000` |
 */
export function runConfigSchema() {
  return runConfigObject().superRefine((raw, ctx) => {
    // run-service's own files never where steps write.
    for (const key of ['RUN_PRIVATE_DIR', 'RUN_SPILL_DIR', 'RUN_STATE_DIR'] as const) {
      const dir = raw[key];
      if (dir !== undefined && isInside(dir, raw.RUN_WORK_DIR))
        ctx.addIssue({ code: 'custom', path: [key], message: `must not be inside RUN_WORK_DIR (${raw.RUN_WORK_DIR})` });
    }
  });
}

/** Whether `path` is `base` or below it (both resolved). */
function isInside(path: string, base: string): boolean {
  const rel = relative(resolve(base), resolve(path));
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

function runConfigObject() {
  return z.object({
    RUN_QUEUE_CONCURRENCY: env.count(8),
    RUN_QUEUES: z
      .string()
      .default('')
      .transform((text, ctx) => {
        try {
          return parseQueueList(text);
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: error instanceof Error ? error.message : String(error) });
          return z.NEVER;
        }
      }),
    RUN_QUEUE_POLL_MS: env.millis(1000),
    RUN_SCHEDULER: env.flag(true),
    RUN_SCHEDULE_TZ: z
      .string()
      .default('UTC')
      .refine((zone) => isTimeZone(zone), 'must be an IANA time zone such as UTC or Europe/Paris'),
    RUN_SCHEDULE_CHECK_MS: env.millis(1000),
    RUN_SCHEDULE_REFRESH_MS: env.millis(5000),
    RUN_HEARTBEAT_MS: env.millis(5000),
    RUN_STOP_GRACE_MS: env.millis(15_000),
    RUN_KILL_GRACE_MS: env.millis(5000),
    RUN_DEFAULT_SHELL: z.string().min(1).default('/bin/sh'),
    RUN_STEP_USER: z
      .string()
      .regex(/^[a-z_][a-z0-9_-]{0,31}$/, 'must be a Unix user name such as dagu-step')
      .optional(),
    RUN_STEP_UID_RANGE: z
      .string()
      .optional()
      .transform((text, ctx) => {
        if (text === undefined || text.trim() === '') return undefined;
        try {
          return parseUidRange(text);
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: error instanceof Error ? error.message : String(error) });
          return z.NEVER;
        }
      }),
    RUN_STEP_MAX_PROCESSES: env.count(256),
    RUN_STEP_MAX_ADDRESS_BYTES: z.coerce.number().int().positive().optional(),
    RUN_STEP_MAX_CPU_SECONDS: z.coerce.number().int().positive().optional(),
    RUN_STEP_SPAWNER: env.flag(true),
    RUN_STEP_SPAWNERS: env.count(2).refine((n) => n <= 16, 'must be at most 16'),
    RUN_WORK_DIR: z.string().min(1).default(join(tmpdir(), 'dagu-mcp-runs')),
    RUN_STEP_LOG_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(4096)
      .default(16 * 1024 * 1024),
    RUN_DIR_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(0)
      .default(1024 * 1024 * 1024),
    RUN_DIR_CHECK_MS: z.coerce.number().int().min(100).max(60_000).default(1000),
    RUN_MIN_FREE_BYTES: z.coerce
      .number()
      .int()
      .min(0)
      .default(256 * 1024 * 1024),
    RUN_LOG_FLUSH_MS: env.millis(50),
    RUN_STATE_WRITE_MS: z.coerce.number().int().min(0).max(1000).default(20),
    RUN_LAUNCH_HOLD_MS: z.coerce.number().int().min(0).max(5000).default(500),
    RUN_LAUNCH_QUIET_MS: z.coerce.number().int().min(0).max(1000).default(15),
    RUN_LOG_BATCH_LINES: env.count(1000),
    RUN_LOG_READ_MAX_BYTES: env.count(1024 * 1024),
    RUN_HIST_RETENTION_DAYS: env.count(30),
    RUN_RETENTION_SWEEP_MS: env.millis(3_600_000),
    RUN_METRICS_DAG_LABELS_MAX: env.count(200),
    RUN_WORKBOOK_MAX_BYTES: env.count(25 * 1024 * 1024),
    RUN_WORKBOOK_TIME_BUDGET_MS: env.millis(20_000),
    RUN_WORKBOOK_MEMORY_MB: env.count(256),
    RUN_WORKBOOK_CONCURRENCY: env.count(2),
    RUN_SPEC_PARSE_THREAD_MIN_BYTES: z.coerce.number().int().min(0).default(65_536),
    RUN_SPEC_PARSE_BUDGET_MS: env.millis(10_000),
    RUN_SPEC_PARSE_MEMORY_MB: env.count(256),
    RUN_DB_OUTAGE_MAX_MS: env.millis(600_000),
    RUN_LOG_SPILL_AFTER_BYTES: env.count(8 * 1024 * 1024),
    RUN_LOG_SPILL_MAX_BYTES: env.count(1024 * 1024 * 1024),
    RUN_PRIVATE_DIR: z.string().min(1).default(join(tmpdir(), 'dagu-mcp-run-service')),
    RUN_SPILL_DIR: z.string().min(1).optional(),
    RUN_STATE_DIR: z.string().min(1).optional(),
    RUN_RECOVERY_GRACE_MS: env.millis(30_000),
    DAG_SPEC_CACHE_MS: z.coerce.number().int().min(0).default(5000),
    DAGU_ENCRYPTION_KEY: z.string().min(1).optional(),
    RUN_MCP_SERVERS: z
      .string()
      .default('')
      .superRefine((value, ctx) => {
        try {
          parseMcpServers(value);
        } catch (err) {
          ctx.addIssue({ code: 'custom', message: err instanceof Error ? err.message : String(err) });
        }
      }),
    OUTBOUND_ALLOW_CIDRS: z
      .string()
      .default('')
      .superRefine((value, ctx) => {
        const issue = outboundRangesIssue(value);
        if (issue !== undefined) ctx.addIssue({ code: 'custom', message: issue });
      }),
  });
}

/** Whether `zone` is an IANA time zone this runtime knows. */
function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Raw env-var form of the engine settings. */
export type RunConfigEnv = z.output<ReturnType<typeof runConfigSchema>>;

/** Where large DAG specs are parsed: the thread budget and the size from which a spec goes there. */
export interface DagSpecThreadLimits extends ThreadBudget {
  /** Specs of at least this many UTF-16 code units are parsed on a thread (`RUN_SPEC_PARSE_THREAD_MIN_BYTES`). */
  readonly threadMinChars: number;
}

/** The engine settings in the shape the engine uses (units in the names). */
export interface RunConfig {
  readonly queueConcurrency: number;
  /** Queues with their own concurrency (`RUN_QUEUES`); others use {@link RunConfig.queueConcurrency}. */
  readonly queues: ReadonlyMap<string, number>;
  readonly queuePollMs: number;
  /** Whether this replica runs the cron scheduler. */
  readonly scheduler: boolean;
  readonly scheduleTimezone: string;
  readonly scheduleCheckMs: number;
  readonly scheduleRefreshMs: number;
  readonly heartbeatMs: number;
  readonly stopGraceMs: number;
  readonly killGraceMs: number;
  readonly defaultShell: string;
  readonly workDir: string;
  /** Unix user the steps run as (`RUN_STEP_USER`, a one-uid range); undefined: as run-service itself. */
  readonly stepUser?: string;
  /** The uids of runs (`RUN_STEP_UID_RANGE`), inclusive; wins over {@link RunConfig.stepUser}. */
  readonly stepUidRange?: { readonly first: number; readonly last: number };
  /** Limits of step processes (`RUN_STEP_MAX_PROCESSES`, `RUN_STEP_MAX_ADDRESS_BYTES`, `RUN_STEP_MAX_CPU_SECONDS`). */
  readonly stepMaxProcesses: number;
  readonly stepMaxAddressBytes?: number;
  readonly stepMaxCpuSeconds?: number;
  /** Start step processes from the spawner process (`RUN_STEP_SPAWNER`). */
  readonly stepSpawner: boolean;
  /** How many spawner processes (`RUN_STEP_SPAWNERS`, 1–16). */
  readonly stepSpawners: number;
  /** Most disk a run's directory may take (`RUN_DIR_MAX_BYTES`), bytes; 0: no bound. */
  readonly runDirMaxBytes: number;
  /** How often a running run's directory is measured (`RUN_DIR_CHECK_MS`), ms. */
  readonly runDirCheckMs: number;
  /** Free bytes a run needs to start its steps (`RUN_MIN_FREE_BYTES`); 0: never waits. */
  readonly minFreeBytes: number;
  /** Most output bytes one try of a step stores (`RUN_STEP_LOG_MAX_BYTES`): head, marker, tail. */
  readonly stepLogMaxBytes: number;
  readonly logFlushMs: number;
  /** Least time between two step-state writes of one attempt (`RUN_STATE_WRITE_MS`), ms; 0: back to back. */
  readonly stateWriteMs: number;
  /** Longest a fresh run waits for the starts in flight before it executes (`RUN_LAUNCH_HOLD_MS`), ms; 0: never. */
  readonly launchHoldMs: number;
  /** How long no start may be in flight before held runs go (`RUN_LAUNCH_QUIET_MS`), ms; 0: at once. */
  readonly launchQuietMs: number;
  readonly logBatchLines: number;
  /** Most UTF-8 bytes of one stream in a log read (`RUN_LOG_READ_MAX_BYTES`). */
  readonly logReadMaxBytes: number;
  /** Days a finished run is kept when its DAG sets no `hist_retention_days`. */
  readonly histRetentionDays: number;
  /** How often a replica looks for runs past their retention. */
  readonly retentionSweepMs: number;
  /** Most distinct `dag` label values of the run metrics (`RUN_METRICS_DAG_LABELS_MAX`); the rest are `other`. */
  readonly metricsDagLabelsMax: number;
  /** Workbook reads (021 `workbook`): file size, parse time, worker heap, parses at once. */
  readonly workbook: {
    readonly maxBytes: number;
    readonly timeBudgetMs: number;
    readonly memoryMb: number;
    readonly concurrency: number;
  };
  /** Where large DAG specs are parsed (core/dag-spec-threads.ts): one thread, its budget, the size that goes there. */
  readonly specParse: DagSpecThreadLimits;
  /** How long the engine retries its writes while PostgreSQL is unavailable (`RUN_DB_OUTAGE_MAX_MS`). */
  readonly dbOutageMaxMs: number;
  /** Log text kept in memory per attempt during an outage before it spills to disk. */
  readonly logSpillAfterBytes: number;
  /** Most spilled log bytes per attempt. */
  readonly logSpillMaxBytes: number;
  /** run-service's own directory, out of the steps' reach (`RUN_PRIVATE_DIR`). */
  readonly privateDir: string;
  /** Where spilled log lines go (`RUN_SPILL_DIR`, default `<privateDir>/outage-spill`). */
  readonly spillDir: string;
  /** Where live step process groups are recorded (`RUN_STATE_DIR`, default `<privateDir>/replica-state`). */
  readonly stateDir: string;
  /** Grace after the recovery sweep's own reconnection (`RUN_RECOVERY_GRACE_MS`). */
  readonly recoveryGraceMs: number;
  /** How long a stored DAG's YAML read from dag-service may be reused (`DAG_SPEC_CACHE_MS`), ms; 0: never. */
  readonly specCacheMs: number;
  /** The secrets-at-rest key ring (`DAGU_ENCRYPTION_KEY`), for secret profile values. */
  readonly encryptionKey?: string;
  /** Non-public CIDR ranges `http.request` steps may reach (`OUTBOUND_ALLOW_CIDRS`); empty: none. */
  readonly outboundAllowCidrs: readonly string[];
  /** `mcp.call` servers by name (`RUN_MCP_SERVERS`). */
  readonly mcpServers: Readonly<Record<string, McpServerEntry>>;
}

/** Converts the parsed variables to {@link RunConfig}. */
export function toRunConfig(raw: RunConfigEnv): RunConfig {
  return {
    queueConcurrency: raw.RUN_QUEUE_CONCURRENCY,
    queues: raw.RUN_QUEUES,
    queuePollMs: raw.RUN_QUEUE_POLL_MS,
    scheduler: raw.RUN_SCHEDULER,
    scheduleTimezone: raw.RUN_SCHEDULE_TZ,
    scheduleCheckMs: raw.RUN_SCHEDULE_CHECK_MS,
    scheduleRefreshMs: raw.RUN_SCHEDULE_REFRESH_MS,
    heartbeatMs: raw.RUN_HEARTBEAT_MS,
    stopGraceMs: raw.RUN_STOP_GRACE_MS,
    killGraceMs: raw.RUN_KILL_GRACE_MS,
    defaultShell: raw.RUN_DEFAULT_SHELL,
    workDir: raw.RUN_WORK_DIR,
    ...(raw.RUN_STEP_USER !== undefined ? { stepUser: raw.RUN_STEP_USER } : {}),
    ...(raw.RUN_STEP_UID_RANGE !== undefined ? { stepUidRange: raw.RUN_STEP_UID_RANGE } : {}),
    stepMaxProcesses: raw.RUN_STEP_MAX_PROCESSES,
    ...(raw.RUN_STEP_MAX_ADDRESS_BYTES !== undefined ? { stepMaxAddressBytes: raw.RUN_STEP_MAX_ADDRESS_BYTES } : {}),
    ...(raw.RUN_STEP_MAX_CPU_SECONDS !== undefined ? { stepMaxCpuSeconds: raw.RUN_STEP_MAX_CPU_SECONDS } : {}),
    stepSpawner: raw.RUN_STEP_SPAWNER,
    stepSpawners: raw.RUN_STEP_SPAWNERS,
    stepLogMaxBytes: raw.RUN_STEP_LOG_MAX_BYTES,
    runDirMaxBytes: raw.RUN_DIR_MAX_BYTES,
    runDirCheckMs: raw.RUN_DIR_CHECK_MS,
    minFreeBytes: raw.RUN_MIN_FREE_BYTES,
    logFlushMs: raw.RUN_LOG_FLUSH_MS,
    stateWriteMs: raw.RUN_STATE_WRITE_MS,
    launchHoldMs: raw.RUN_LAUNCH_HOLD_MS,
    launchQuietMs: raw.RUN_LAUNCH_QUIET_MS,
    logBatchLines: raw.RUN_LOG_BATCH_LINES,
    logReadMaxBytes: raw.RUN_LOG_READ_MAX_BYTES,
    histRetentionDays: raw.RUN_HIST_RETENTION_DAYS,
    retentionSweepMs: raw.RUN_RETENTION_SWEEP_MS,
    metricsDagLabelsMax: raw.RUN_METRICS_DAG_LABELS_MAX,
    workbook: {
      maxBytes: raw.RUN_WORKBOOK_MAX_BYTES,
      timeBudgetMs: raw.RUN_WORKBOOK_TIME_BUDGET_MS,
      memoryMb: raw.RUN_WORKBOOK_MEMORY_MB,
      concurrency: raw.RUN_WORKBOOK_CONCURRENCY,
    },
    specParse: {
      threadMinChars: raw.RUN_SPEC_PARSE_THREAD_MIN_BYTES,
      budgetMs: raw.RUN_SPEC_PARSE_BUDGET_MS,
      memoryMb: raw.RUN_SPEC_PARSE_MEMORY_MB,
      threads: 1,
    },
    dbOutageMaxMs: raw.RUN_DB_OUTAGE_MAX_MS,
    logSpillAfterBytes: raw.RUN_LOG_SPILL_AFTER_BYTES,
    logSpillMaxBytes: raw.RUN_LOG_SPILL_MAX_BYTES,
    privateDir: raw.RUN_PRIVATE_DIR,
    spillDir: raw.RUN_SPILL_DIR ?? join(raw.RUN_PRIVATE_DIR, 'outage-spill'),
    recoveryGraceMs: raw.RUN_RECOVERY_GRACE_MS,
    stateDir: raw.RUN_STATE_DIR ?? join(raw.RUN_PRIVATE_DIR, 'replica-state'),
    specCacheMs: raw.DAG_SPEC_CACHE_MS,
    ...(raw.DAGU_ENCRYPTION_KEY !== undefined ? { encryptionKey: raw.DAGU_ENCRYPTION_KEY } : {}),
    outboundAllowCidrs: splitCidrs(raw.OUTBOUND_ALLOW_CIDRS),
    mcpServers: parseMcpServers(raw.RUN_MCP_SERVERS),
  };
}

function splitCidrs(value: string): string[] {
  return value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}

/** Why `value` is not a list of CIDR ranges, or undefined. */
function outboundRangesIssue(value: string): string | undefined {
  try {
    AddressRanges.parse(splitCidrs(value));
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/**
 * Parses the engine settings from `source` (default `process.env`).
 *
 * @throws ConfigError naming every bad variable, e.g. `RUN_QUEUE_CONCURRENCY: …`
 */
export function loadRunConfig(source: NodeJS.ProcessEnv = process.env): RunConfig {
  return toRunConfig(parseConfig(runConfigSchema(), source));
}

/** The defaults (no variable set): what tests start from. */
export function defaultRunConfig(overrides: Partial<RunConfig> = {}): RunConfig {
  return { ...loadRunConfig({}), ...overrides };
}
