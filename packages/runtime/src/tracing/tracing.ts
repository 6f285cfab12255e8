import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { Logger } from '../logging/logger';

export { SpanKind, SpanStatusCode, InMemorySpanExporter };
export type { Context, ReadableSpan, Span, SpanExporter };

/** The instrumentation scope of every span this project makes. */
export const TRACER_NAME = 'dagu-mcp';

/** W3C trace context as it travels in a bus request (`BusRequest.traceContext`). */
export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

/** Options of {@link setupTracing}. */
export interface TracingOptions {
  /** `service.name` of the spans, e.g. `dag-service`. */
  readonly serviceName: string;
  /**
   * `OTEL_EXPORTER_OTLP_ENDPOINT`: base URL of an OTLP/HTTP collector
   * (`/v1/traces` is appended). Unset or empty: nothing is exported.
   */
  readonly otlpEndpoint?: string | undefined;
  /** Tests: export to this exporter (e.g. {@link InMemorySpanExporter}) synchronously, whatever `otlpEndpoint` says. */
  readonly exporter?: SpanExporter;
  readonly logger?: Logger;
}

/** What {@link setupTracing} set up. */
export interface Tracing {
  /** True when spans are recorded and exported (an endpoint or an exporter was given). */
  readonly exporting: boolean;
  /** Exports what is buffered. */
  forceFlush(): Promise<void>;
  /** Flushes, stops exporting and unregisters the tracer provider. Idempotent. */
  shutdown(): Promise<void>;
}

/**
 * Sets up OpenTelemetry for this process, once, at start:
 * - always: the AsyncLocalStorage context manager and the W3C `traceparent`
 *   propagator, so a trace context received (bus job) is carried through the
 *   code and passed on (bus calls) even when nothing is exported;
 * - with `otlpEndpoint`: a tracer provider exporting in batches over OTLP/HTTP
 *   (headers from `OTEL_EXPORTER_OTLP_HEADERS`, read by the exporter);
 * - with `exporter`: a tracer provider exporting each span as it ends (tests);
 * - with neither: no tracer provider at all (spans are non-recording, cost nothing).
 */
export function setupTracing(options: TracingOptions): Tracing {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const endpoint = options.otlpEndpoint?.trim() ?? '';
  let processor: SpanProcessor | undefined;
  if (options.exporter !== undefined) {
    processor = new SimpleSpanProcessor(options.exporter);
  } else if (endpoint !== '') {
    processor = new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` }));
  }
  if (processor === undefined) {
    return { exporting: false, forceFlush: async () => undefined, shutdown: async () => undefined };
  }
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName }),
    spanProcessors: [processor],
  });
  trace.setGlobalTracerProvider(provider);
  options.logger?.info({ endpoint: endpoint === '' ? undefined : endpoint }, 'tracing enabled');
  let stopped = false;
  return {
    exporting: true,
    forceFlush: () => provider.forceFlush(),
    async shutdown() {
      if (stopped) return;
      stopped = true;
      await provider.shutdown().catch((err: unknown) => options.logger?.warn({ err }, 'tracing shutdown failed'));
      trace.disable();
    },
  };
}

/** The project's tracer (no-op until {@link setupTracing} registered a provider). */
export function getTracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

/** Options of {@link startSpan} and {@link withSpan}. */
export interface SpanOptions {
  readonly kind?: SpanKind;
  readonly attributes?: Attributes;
  /** The parent context; default the active one. */
  readonly parent?: Context;
}

/** Starts a span (not made active) under `options.parent` or the active context; end it yourself. */
export function startSpan(name: string, options: SpanOptions = {}): Span {
  return getTracer().startSpan(
    name,
    {
      kind: options.kind ?? SpanKind.INTERNAL,
      ...(options.attributes !== undefined ? { attributes: options.attributes } : {}),
    },
    options.parent ?? context.active(),
  );
}

/**
 * Runs `fn` inside a new active span and ends it when `fn` settles; a throw
 * is recorded on the span (status ERROR) and rethrown.
 */
export async function withSpan<T>(name: string, options: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  const span = startSpan(name, options);
  try {
    return await context.with(trace.setSpan(options.parent ?? context.active(), span), () => fn(span));
  } catch (err) {
    recordFailure(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** Marks `span` failed with `err` (exception event and ERROR status). */
export function recordFailure(span: Span, err: unknown): void {
  if (err instanceof Error) span.recordException(err);
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

/** The W3C trace context of `ctx` (default the active one): `{}` when there is no span to continue. */
export function injectTraceContext(ctx: Context = context.active()): TraceCarrier {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  const out: TraceCarrier = {};
  if (carrier.traceparent !== undefined) out.traceparent = carrier.traceparent;
  if (carrier.tracestate !== undefined) out.tracestate = carrier.tracestate;
  return out;
}

/** A context whose remote parent is the `traceparent` of `carrier` (the active context when there is none). */
export function extractTraceContext(carrier: TraceCarrier, base: Context = context.active()): Context {
  return propagation.extract(base, carrier);
}

/** True when a recording span is active: child spans (SQL, …) are worth making. */
export function hasRecordingSpan(ctx: Context = context.active()): boolean {
  return trace.getSpan(ctx)?.isRecording() === true;
}
