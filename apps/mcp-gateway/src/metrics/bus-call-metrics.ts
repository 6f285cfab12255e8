import { durationHistogram, METRIC_NAMES, timeAsync, type Registry } from '@dagu-mcp/runtime';

/**
 * The gateway's bus-call timer (docs/architecture.md "Deployment"): only the gateway
 * calls services over the bus, so it lives here rather than in runtime.
 */

/** Times bus calls into {@link METRIC_NAMES.busCallDuration}. */
export interface BusCallMetrics {
  /** Runs `call` (one bus call of `op` to `service`) and records its duration and outcome. */
  time<T>(service: string, op: string, call: () => Promise<T>): Promise<T>;
}

/** The gateway's bus-call timer on `registry`. */
export function createBusCallMetrics(registry: Registry): BusCallMetrics {
  const histogram = durationHistogram(
    registry,
    METRIC_NAMES.busCallDuration,
    'Bus calls from the gateway to a service, until the reply or failure.',
    ['service', 'op', 'outcome'],
  );
  return {
    time: (service, op, call) =>
      timeAsync(call, (outcome, seconds) => histogram.observe({ service, op, outcome }, seconds)),
  };
}
