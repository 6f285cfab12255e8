/**
 * The normalized DAG model (dagu-model.md §3). `parseDagSpec` turns a DAG YAML
 * stream into these plain, JSON-serializable objects: every legacy spelling is
 * resolved, `defaults` are applied, dependencies are step names, and optional
 * fields are absent rather than `undefined`. It is the `dag` field of the
 * `dagu_change` output (spec 022) and the input of the engine.
 */

/** Any JSON value (literal foreach items, human-task forms). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/** `graph` (default): steps run when their `depends` are done; `chain`: each step depends on the previous one. */
export type DagType = 'graph' | 'chain';

/** A declared DAG param. Positional params (`params: foo`) are named `1`, `2`, … in order. */
export interface ParamDef {
  name: string;
  /** Default value; `null` when the param is declared without one. */
  default: string | null;
  description?: string;
  /** Typed-param declaration (`- name: x, type: integer, …`). */
  type?: 'string' | 'integer' | 'number' | 'boolean';
  enum?: string[];
  minimum?: number;
  maximum?: number;
  required?: boolean;
}

/** One environment variable, in declaration order. */
export interface EnvVar {
  key: string;
  value: string;
}

/** A precondition: run `condition` (a command, or a `$VAR` to expand) and compare with `expected` (`re:` = regex). */
export interface Precondition {
  condition: string;
  expected?: string;
  negate?: boolean;
}

/** `continue_on`: when a failed/skipped step lets its dependents run. */
export interface ContinueOn {
  failure: boolean;
  skipped: boolean;
  exitCode: number[];
  output: string[];
  markSuccess: boolean;
}

/** `retry_policy`. `backoff` is the multiplier (`true` in YAML = 2). Units: seconds. */
export interface RetryPolicy {
  limit: number;
  intervalSec: number;
  backoff?: number;
  maxIntervalSec?: number;
  /** Retry only on these exit codes; empty = any failure. */
  exitCodes: number[];
}

/** `repeat_policy`. `while`: repeat while the condition holds; `until`: until it holds. Units: seconds. */
export interface RepeatPolicy {
  mode: 'while' | 'until';
  intervalSec: number;
  limit?: number;
  condition?: string;
  expected?: string;
  exitCodes: number[];
  backoff?: number;
  maxIntervalSec?: number;
}

/** One field of a structured `output` map: `{from: stdout, decode: json, select: .path}`. */
export interface OutputField {
  name: string;
  from: 'stdout' | 'stderr';
  decode?: 'json';
  select?: string;
}

/** `output`: a variable name for trimmed stdout, or named fields read as `${<id>.output.<name>}`. */
export type StepOutput = { kind: 'variable'; name: string } | { kind: 'fields'; fields: OutputField[] };

/** A command to run: a shell line (`run: echo hi`) or an argv run without a shell (legacy `command: [echo, 1]`). */
export type StepCommand = { kind: 'shell'; line: string } | { kind: 'exec'; argv: string[] };

/** Action of a step with `action:` (or legacy `call:`), its `with:` resolved. */
export type StepAction =
  | { type: 'dag.run' | 'dag.enqueue'; dag: string; params?: string | Record<string, string> }
  | {
      type: 'http.request';
      method: string;
      url: string;
      headers: Record<string, string>;
      body?: string;
      timeoutSec?: number;
      /** Query-string parameters added to the URL (dagu-actions §1.2 `query`). */
      query?: Record<string, string>;
      /** On a 2xx, print only the body (§1.2 `silent`). */
      silent?: boolean;
      /** Print one JSON object `{status_code, headers, body}` (§1.2 `format: json` / `json: true`). */
      json?: boolean;
    }
  | { type: 'human.task'; prompt: string; form?: JsonObject }
  | HostAction;

/**
 * The actions run by a helper process where steps run (dagu-actions §1.3,
 * §1.6–1.9): `jq.filter`, `template.render`, `file.*`, `mcp.call`, and `docker.run` /
 * `container.run` (validated; they fail at run time: no container engine).
 */
export const HOST_ACTIONS = [
  'docker.run',
  'container.run',
  'jq.filter',
  'template.render',
  'file.stat',
  'file.read',
  'file.write',
  'file.copy',
  'file.move',
  'file.delete',
  'file.mkdir',
  'file.list',
  'mcp.call',
] as const;
export type HostActionName = (typeof HOST_ACTIONS)[number];

/** A host action and its `with` map, snake_case keys, values as written (resolved at run time). */
export interface HostAction {
  type: HostActionName;
  with: JsonObject;
}

/** `approval`: after the step runs it waits for a person; `rewindTo` is a step name. */
export interface ApprovalSpec {
  prompt?: string;
  input: string[];
  required: string[];
  rewindTo?: string;
}

/** `foreach`: run `steps` once per item. `items` is a literal list (≤ 1000) or a string resolved at run time. */
export interface ForeachSpec {
  items: JsonValue[] | string;
  /** Item variable name: `${foreach.<as>}`; default `item`. */
  as: string;
  key?: string;
  maxConcurrent?: number;
  steps: NormalizedStep[];
  /** `collect`: name → template evaluated per item (Dagu extension, kept for the engine). */
  collect?: Record<string, string>;
}

/** What a step does. `approval` = a gate with nothing to run. */
export type StepKind =
  'command' | 'script' | 'sub_dag' | 'http' | 'human_task' | 'foreach' | 'approval' | 'host_action';

/** A normalized step. `depends` holds step names (for chain DAGs: the previous step). */
export interface NormalizedStep {
  name: string;
  id?: string;
  description?: string;
  kind: StepKind;
  /** `command` steps: commands run in sequence. */
  commands?: StepCommand[];
  /** `script` steps: the script text. */
  script?: string;
  /** `script` steps: program the script file is passed to (legacy `command: python` + `script:`). */
  interpreter?: string[];
  shell?: string[];
  workingDir?: string;
  env: EnvVar[];
  depends: string[];
  continueOn: ContinueOn;
  retryPolicy?: RetryPolicy;
  repeatPolicy?: RepeatPolicy;
  preconditions: Precondition[];
  timeoutSec?: number;
  /** Names the step writes to `$DAGU_OUTPUT_FILE` as `KEY=value`. */
  outputs: string[];
  output?: StepOutput;
  foreach?: ForeachSpec;
  action?: StepAction;
  approval?: ApprovalSpec;
}

/** Lifecycle handler kinds (`handler_on`). */
export const HANDLER_KINDS = ['init', 'success', 'failure', 'abort', 'exit', 'wait'] as const;
export type HandlerKind = (typeof HANDLER_KINDS)[number];
export type HandlerOn = Partial<Record<HandlerKind, NormalizedStep>>;

/** A normalized DAG (root document or local sub-DAG). */
export interface NormalizedDag {
  /** Effective name: the tool's name when given, else the YAML `name`. */
  name: string;
  /** The YAML `name` when it differs from `name`. */
  yamlName?: string;
  description?: string;
  type: DagType;
  workingDir?: string;
  histRetentionDays?: number;
  params: ParamDef[];
  env: EnvVar[];
  labels: string[];
  /** 5-field cron expressions (an optional `CRON_TZ=<zone> ` prefix is kept). */
  schedule: string[];
  queue?: string;
  /** Default 1. */
  maxActiveRuns: number;
  /** Default 0 = no limit. */
  maxActiveSteps: number;
  timeoutSec?: number;
  preconditions: Precondition[];
  handlerOn: HandlerOn;
  steps: NormalizedStep[];
}

/** Result of `parseDagSpec`. `dag` and `subDags` are filled only when `valid`. */
export interface DagSpecResult {
  valid: boolean;
  errors: string[];
  /** References that will not resolve at run time; empty when invalid. */
  warnings: string[];
  dag?: NormalizedDag;
  subDags: NormalizedDag[];
}
