/**
 * The action helper (dagu-actions §1.1): the process run-service starts for a
 * host action step (executors/host-action.executor.ts) through the step
 * launcher, so it runs as the run's uid, in the step's working directory,
 * with the run's limits — never inside run-service. Usage:
 * `node action-main.js <spec file>`, the file holding
 * `{"action": "<name>", "with": {…resolved…}, "host": {…run-service's settings…}}`. The action's output goes to
 * stdout; a failure writes its message as one stderr line (the step's
 * `error`) and exits 1.
 */
import { readFileSync } from 'node:fs';
import { asRecord } from './action-types';
import { runHostAction } from './run-host-action';

async function main(): Promise<void> {
  const file = process.argv[2];
  if (file === undefined) throw new Error('usage: action-main <spec file>');
  const spec = asRecord(JSON.parse(readFileSync(file, 'utf8')));
  const output = await runHostAction(String(spec?.action), asRecord(spec?.with) ?? {}, asRecord(spec?.host) ?? {});
  await new Promise<void>((done, fail) => process.stdout.write(output.stdout, (err) => (err ? fail(err) : done())));
  if (output.error !== undefined) throw new Error(output.error);
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`${message.replace(/\s*\n\s*/g, '; ').trim()}\n`);
  process.exitCode = 1;
});
