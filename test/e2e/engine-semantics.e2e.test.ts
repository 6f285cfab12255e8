/**
 * The engine's graph semantics through the real SDK client (issue "Run engine
 * core": depends, retry_policy, continue_on, preconditions, outputs,
 * handler_on and timeout_sec in one DAG; dagu-model §1, §3, §5).
 */
import { useStackAndClient } from './stack';

const DAG = `params: "GREETING=hi"
handler_on:
  exit:
    run: echo exit-handler
steps:
  - name: produce
    id: produce
    run: echo "VALUE=42" >> "$DAGU_OUTPUT_FILE"
    outputs: [VALUE]
  - name: flaky
    depends: [produce]
    run: test -f flaky.marker || { touch flaky.marker; exit 1; }
    retry_policy: {limit: 2, interval_sec: 0}
  - name: consume
    depends: [produce]
    run: echo "got \${steps.produce.outputs.VALUE} $GREETING"
  - name: skipped
    depends: [produce]
    preconditions: [{condition: "$GREETING", expected: "nope"}]
    run: echo never
  - name: allowed-failure
    depends: [consume]
    run: exit 3
    continue_on: {failure: true}
  - name: slow
    depends: [consume]
    run: sleep 5
    timeout_sec: 1
    continue_on: {failure: true}
`;

const e2e = useStackAndClient();

test('one run exercises depends, retry, outputs, preconditions, continue_on, timeouts and handlers', async () => {
  const applied = await e2e.client.callTool({
    name: 'dagu_change',
    arguments: { name: 'semantics', spec: DAG, mode: 'apply' },
  });
  expect(applied.structuredContent).toMatchObject({ valid: true, applied: true });
  const started = await e2e.client.callTool(
    { name: 'dagu_execute', arguments: { action: 'start', name: 'semantics', wait: true, waitTimeoutSeconds: 60 } },
    undefined,
    { timeout: 70_000 },
  );
  const sc = started.structuredContent as {
    completed: boolean;
    run: {
      status: number;
      statusLabel: string;
      dagRunId: string;
      steps: Array<Record<string, unknown>>;
      handlers?: Record<string, Record<string, unknown>>;
    };
  };
  expect(sc.completed).toBe(true);
  const steps = new Map(sc.run.steps.map((s) => [String(s.name), s]));
  expect(steps.get('produce')).toMatchObject({ status: 4 });
  expect(steps.get('flaky')).toMatchObject({ status: 4, retryCount: 1 });
  expect(steps.get('consume')).toMatchObject({ status: 4 });
  expect(steps.get('skipped')).toMatchObject({ status: 5, statusLabel: 'skipped' });
  expect(steps.get('allowed-failure')).toMatchObject({ status: 2 });
  expect(steps.get('slow')).toMatchObject({ status: 2 });
  expect(String(steps.get('slow')?.error)).toContain('timed out');
  // A failure that continue_on allows leaves the run partially succeeded (dagu-model §1: 6).
  expect(sc.run).toMatchObject({ status: 6, statusLabel: 'partially_succeeded' });
  expect(sc.run.handlers?.onExit).toMatchObject({ status: 4 });

  const log = await e2e.client.callTool({
    name: 'dagu_read',
    arguments: { target: 'step_log', name: 'semantics', dagRunId: sc.run.dagRunId, stepName: 'consume' },
  });
  expect((log.structuredContent as { data: { stdoutContent: string } }).data.stdoutContent).toBe('got 42 hi');
}, 90_000);
