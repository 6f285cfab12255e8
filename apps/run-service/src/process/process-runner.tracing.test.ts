import { InMemorySpanExporter, setupTracing, SpanStatusCode, withSpan, type Tracing } from '@dagu-mcp/runtime';
import { DIRECT_LAUNCHER } from '../core/step-launch';
import { runProcess, type ProcessSpec } from './process-runner';

/**
 * run-service's step spans (deployment issue, "OpenTelemetry traces"): each
 * step's child process is a span, child of the span active when it started
 * (the bus job's handler span, continued from the gateway), with its exit.
 */
const exporter = new InMemorySpanExporter();
let tracing: Tracing;

beforeAll(() => {
  tracing = setupTracing({ serviceName: 'run-service-test', exporter });
});
afterAll(() => tracing.shutdown());
beforeEach(() => exporter.reset());

function spec(args: readonly string[], name?: string): ProcessSpec {
  return {
    file: '/bin/sh',
    args,
    cwd: process.cwd(),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    launcher: DIRECT_LAUNCHER,
    signal: new AbortController().signal,
    killGraceMs: 1000,
    onStdout: () => undefined,
    onStderr: () => undefined,
    ...(name !== undefined ? { trace: { name, attributes: { 'dagu.step.name': name } } } : {}),
  };
}

it('records a step process as a child span of the active span, with its exit code', async () => {
  const outcome = await withSpan('handle start', {}, () => runProcess(spec(['-c', 'echo hi'], 'step hello')));
  expect(outcome.exitCode).toBe(0);
  const spans = exporter.getFinishedSpans();
  const parent = spans.find((s) => s.name === 'handle start');
  const step = spans.find((s) => s.name === 'step hello');
  expect(step?.spanContext().traceId).toBe(parent?.spanContext().traceId);
  expect(step?.parentSpanContext?.spanId).toBe(parent?.spanContext().spanId);
  expect(step?.attributes['process.exit.code']).toBe(0);
  expect(step?.attributes['dagu.step.name']).toBe('step hello');
  expect(typeof step?.attributes['process.pid']).toBe('number');
  expect(step?.status.code).toBe(SpanStatusCode.UNSET);
});

it('marks a failing process span as an error', async () => {
  const outcome = await runProcess(spec(['-c', 'exit 3']));
  expect(outcome.exitCode).toBe(3);
  const [span] = exporter.getFinishedSpans();
  expect(span?.name).toBe('process sh');
  expect(span?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'exit 3' });
});
