/**
 * Whether process `pid` exists and is ours to signal (`kill(pid, 0)`): the
 * step-process tests' check that a kill reached a process.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
