/**
 * Key resolution for each mapping of the DAG YAML (dagu-model.md §3): keys are
 * snake_case, legacy camelCase spellings (`handlerOn`, `retryPolicy`,
 * `intervalSec`, …) and a few aliases (`dir`) are accepted and mapped to the
 * snake_case key. Keys Dagu knows but this project does not run are refused as
 * "not supported here"; any other key is an unknown field (§4).
 */
import type { ErrorSink } from './error-sink';
import { didYouMeanSuffix } from './suggest-names';
import type { YamlMap } from './yaml-values';

/** The keys one kind of mapping accepts. */
export interface KeySpec {
  /** Canonical snake_case keys. */
  allowed: readonly string[];
  /** Other spellings → canonical key. */
  aliases?: Readonly<Record<string, string>>;
  /** Dagu keys refused here → the reason shown after `field '<k>': `. */
  unsupported?: Readonly<Record<string, string>>;
}

/** `maxActiveRuns` → `max_active_runs`; other keys unchanged. */
export function camelToSnake(key: string): string {
  if (!/^[a-z][A-Za-z0-9]*$/.test(key) || !/[A-Z]/.test(key)) return key;
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/**
 * Reads a mapping's keys against `spec`. Returns canonical key → value for the
 * accepted keys; records `field '<prefix><key>': unknown field` (followed by
 * `; did you mean '<key>'?` when an accepted key is close, spec 036's
 * did-you-mean), `… is not supported here` or `… duplicates '<key>'` errors
 * for the rest.
 */
export function readKeys(map: YamlMap, spec: KeySpec, sink: ErrorSink, fieldPrefix = ''): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [raw, value] of map) {
    const canonical = resolveKey(raw, spec);
    const field = `${fieldPrefix}${raw}`;
    if (canonical === undefined) {
      const reason = spec.unsupported?.[raw] ?? spec.unsupported?.[camelToSnake(raw)];
      sink.field(field, reason ?? `unknown field${didYouMeanSuffix(raw, spec.allowed)}`);
    } else if (out.has(canonical)) {
      sink.field(field, `duplicates '${fieldPrefix}${canonical}'`);
    } else {
      out.set(canonical, value);
    }
  }
  return out;
}

function resolveKey(raw: string, spec: KeySpec): string | undefined {
  for (const key of [raw, camelToSnake(raw)]) {
    if (spec.allowed.includes(key)) return key;
    const alias = spec.aliases?.[key];
    if (alias !== undefined) return alias;
  }
  return undefined;
}

const NOT_HERE = 'is not supported here';

/** Root keys of a DAG document. */
export const ROOT_KEYS: KeySpec = {
  allowed: [
    'name',
    'description',
    'type',
    'working_dir',
    'defaults',
    'hist_retention_days',
    'schedule',
    'params',
    'env',
    'labels',
    'tags',
    'queue',
    'max_active_runs',
    'max_active_steps',
    'timeout_sec',
    'preconditions',
    'handler_on',
    'steps',
  ],
  aliases: { dir: 'working_dir', precondition: 'preconditions' },
  unsupported: {
    container: `containers are not supported here`,
    ssh: `ssh ${NOT_HERE}`,
    smtp: `mail (SMTP settings) ${NOT_HERE}`,
    mail_on: `mail notifications are not supported here`,
    error_mail: `mail notifications are not supported here`,
    info_mail: `mail notifications are not supported here`,
    llm: `LLM agents are not supported here`,
    agent: `LLM agents are not supported here`,
    tasks: `LLM agent tasks are not supported here`,
    worker_selector: `distributed workers are not supported here`,
    otel: `OpenTelemetry (otel) ${NOT_HERE}`,
    secrets: `secret providers are not supported here`,
    dotenv: `dotenv files are not supported here`,
    registry_auths: `container registries are not supported here`,
    log_dir: `log_dir ${NOT_HERE}`,
    shell: `a root shell ${NOT_HERE}; use defaults.shell`,
    hist_retention_runs: `hist_retention_runs ${NOT_HERE}; use hist_retention_days`,
    skip_if_successful: `skip_if_successful ${NOT_HERE}`,
    restart_wait_sec: `restart_wait_sec ${NOT_HERE}`,
    delay_sec: `delay_sec ${NOT_HERE}`,
    max_output_size: `max_output_size ${NOT_HERE}`,
    max_clean_up_time_sec: `max_clean_up_time_sec ${NOT_HERE}`,
    run_config: `run_config ${NOT_HERE}`,
    group: `group ${NOT_HERE}`,
  },
};

/** Keys of `defaults` (settings every step inherits). */
export const DEFAULTS_KEYS: KeySpec = {
  allowed: ['retry_policy', 'continue_on', 'timeout_sec', 'env', 'working_dir', 'shell'],
  aliases: { dir: 'working_dir' },
};

/** Keys of a step. */
export const STEP_KEYS: KeySpec = {
  allowed: [
    'name',
    'id',
    'description',
    'run',
    'command',
    'script',
    'shell',
    'working_dir',
    'env',
    'depends',
    'continue_on',
    'retry_policy',
    'repeat_policy',
    'preconditions',
    'timeout_sec',
    'outputs',
    'output',
    'foreach',
    'action',
    'with',
    'approval',
    'call',
    'params',
    'executor',
    'type',
    'config',
  ],
  aliases: { dir: 'working_dir', precondition: 'preconditions' },
  unsupported: {
    container: `containers are not supported here`,
    ssh: `ssh ${NOT_HERE}`,
    mail_on_error: `mail notifications are not supported here`,
    llm: `LLM agents are not supported here`,
    agent: `LLM agents are not supported here`,
    messages: `LLM agents are not supported here`,
    parallel: `parallel sub-DAG fan-out is not supported here; use foreach`,
    worker_selector: `distributed workers are not supported here`,
    signal_on_stop: `signal_on_stop ${NOT_HERE}`,
    stdout: `redirecting stdout to a file ${NOT_HERE}`,
    stderr: `redirecting stderr to a file ${NOT_HERE}`,
    router: `routers are not supported here`,
  },
};
