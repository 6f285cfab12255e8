/**
 * Names no param, step output, human-task field or approval input may take
 * (dagu-model §3 "Values never become shell code"): each of these reaches a
 * step's environment, and these names would change what the shell or a
 * runtime loads (`PATH`, `BASH_ENV`, `LD_PRELOAD`, …) or forge what the engine
 * itself sets (`DAG_*`, `DAGU_*`). Case-sensitive, like environment names.
 */
const RESERVED_EXACT: ReadonlySet<string> = new Set([
  'PATH',
  'HOME',
  'SHELL',
  'IFS',
  'ENV',
  'BASH_ENV',
  'NODE_OPTIONS',
]);
const RESERVED_PREFIXES: readonly string[] = ['LD_', 'DYLD_', 'PYTHON', 'PERL5', 'DAG_', 'DAGU_'];

/** True when `name` may not be set by a param, output, human-task field or approval input (dagu-model §3). */
export function isReservedValueName(name: string): boolean {
  return RESERVED_EXACT.has(name) || RESERVED_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/** The message of a refused name, the same on every surface. */
export function reservedNameMessage(name: string): string {
  return `${name} is reserved: no param, output or input may set PATH, HOME, SHELL, IFS, ENV, BASH_ENV, LD_*, DYLD_*, PYTHON*, PERL5*, NODE_OPTIONS, DAG_* or DAGU_* (dagu-model §3)`;
}
