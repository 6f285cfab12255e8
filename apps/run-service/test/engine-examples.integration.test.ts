import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDagSpec } from '@dagu-mcp/dag-spec';
import { TERMINAL_RUN_STATUSES, WAITING_RUN_STATUS } from '@dagu-mcp/contracts';
import { createRunTestEnv, type RunTestEnv } from '../test-fixtures/run-test-env';
import { readStepLog } from '../src/read/run-logs';
import { DAGU_EXAMPLES_DIR } from '../../../packages/dag-spec/test-fixtures/dagu-examples';

/**
 * Every valid real Dagu DAG file of the dagu-examples runs through the engine
 * and ends as it did before values became variables (dagu-model §3 "Values
 * never become shell code"; docs/security.md "Role boundaries" 2): the run's
 * status, each step's status and its stdout are compared with
 * `dagu-examples-outcomes.json`, recorded with the engine that pasted values
 * into the command text. Regenerate (only after checking a difference is
 * intended) with `UPDATE_OUTCOMES=1`.
 */
const EXAMPLES = DAGU_EXAMPLES_DIR;
const OUTCOMES = join(__dirname, 'dagu-examples-outcomes.json');
/** An example that has not ended or parked at a checkpoint by then is recorded as it stands. */
const RUN_LIMIT_MS = 15_000;

interface Outcome {
  status: string;
  steps: Array<{ name: string; status: string; stdout: string }>;
}

/** Examples whose outcome depends on the machine, not the engine: the network, or a run longer than the limit. */
const MACHINE_DEPENDENT: ReadonlySet<string> = new Set([
  'cli-http-requests.yaml', // http.request to a public host
  'v1-chain-workflow.yaml', // wget of a public URL
  'v1-example-workflow.yaml', // sleeps past RUN_LIMIT_MS: where it stands then is a matter of timing
]);

const files = readdirSync(EXAMPLES)
  .filter((file) => file.endsWith('.yaml') && !MACHINE_DEPENDENT.has(file))
  .sort()
  .filter((file) => parseDagSpec(readFileSync(join(EXAMPLES, file), 'utf8'), { name: dagName(file) }).valid);
const recorded: Record<string, Outcome> =
  process.env.UPDATE_OUTCOMES === '1' ? {} : (JSON.parse(readFileSync(OUTCOMES, 'utf8')) as Record<string, Outcome>);
const observed: Record<string, Outcome> = {};
let env: RunTestEnv;

function dagName(file: string): string {
  return file.replace(/\.yaml$/, '').slice(0, 40);
}

/** Run-specific text (run ids, dates, times, paths of the run) that differs between two runs of one file. */
function stable(text: string, dagRunId: string): string {
  return text
    .split(dagRunId)
    .join('<run-id>')
    .replace(/\d{8}T\d{6,9}Z-[a-z0-9]+/g, '<run-id>')
    .replace(/\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?/g, '<time>')
    .replace(/\b\d{8,}\b/g, '<number>')
    .replace(/e2e_\w+|run_examples_\w+/g, '<schema>');
}

async function runExample(file: string): Promise<Outcome> {
  const name = dagName(file);
  const id = await env.start(name, readFileSync(join(EXAMPLES, file), 'utf8'));
  const until = Date.now() + RUN_LIMIT_MS;
  let run = await env.detail(name, id);
  while (!TERMINAL_RUN_STATUSES.has(run.status) && run.status !== WAITING_RUN_STATUS && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    run = await env.detail(name, id);
  }
  // A run waiting on a child's checkpoint shows its `dag.run` step waiting too (dagu-model §3); step
  // states are written in the background, so let them settle before recording where the run stands.
  while (
    run.status === WAITING_RUN_STATUS &&
    run.steps.some((step) => step.statusLabel === 'running') &&
    Date.now() < until
  ) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    run = await env.detail(name, id);
  }
  const steps = [];
  for (const step of run.steps) {
    const log = await readStepLog(env.pool, { dagName: name, dagRunId: id, stepName: step.name });
    steps.push({ name: step.name, status: step.statusLabel, stdout: stable(log.stdoutContent, id) });
  }
  return { status: run.statusLabel, steps };
}

beforeAll(async () => {
  env = await createRunTestEnv('examples');
});
afterAll(async () => {
  await env.close();
  if (process.env.UPDATE_OUTCOMES === '1') writeFileSync(OUTCOMES, `${JSON.stringify(observed, null, 2)}\n`);
});

test('there are valid examples to run', () => {
  expect(files.length).toBeGreaterThan(20);
});

test.each(files)(
  '%s ends as it did',
  async (file) => {
    const outcome = await runExample(file);
    observed[file] = outcome;
    if (process.env.UPDATE_OUTCOMES !== '1') expect(outcome).toEqual(recorded[file]);
  },
  30_000,
);
