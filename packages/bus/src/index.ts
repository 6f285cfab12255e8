/**
 * @dagu-mcp/bus — the request bus between the gateway and the services
 * (docs/architecture.md "Request flow"): BullMQ queues over Redis, one per service,
 * with replies published on the caller's own pub/sub channel.
 *
 * - Gateway: `BusClient` (`start`, `call`, `callRaw`, `isReady`, `ping`, `close`).
 * - Service: `ServiceWorker` with a `HandlerMap` typed by the op catalog.
 */
export { activeTraceContext, BusClient, type BusClientOptions, type CallOptions } from './bus-client';
export { ServiceWorker, type ServiceWorkerOptions } from './service-worker';
export { type HandlerContext, type HandlerMap, type OpHandler, createHandlerContext } from './handler-context';
export { processBusJob, type JobInput, type JobOutcome } from './job-processor';
export { payloadHashOf } from './payload-hash';
export { type BusLogger, SILENT_LOGGER, bindLogger } from './bus-logger';
export {
  DEFAULT_BUS_PREFIX,
  DEFAULT_TIMEOUT_MS,
  queueNameOf,
  attemptsOf,
  replyChannelOf,
  encodeReplyMessage,
  decodeReplyMessage,
} from './bus-protocol';
export {
  busUnavailableError,
  deadlineExceededError,
  deadlinePassedError,
  fieldOfZodError,
  invalidInputError,
  isUnknownOpError,
  outcomeUnknownError,
  unknownOpError,
} from './bus-errors';
export { evalScript } from './redis-script';
export { currentIdempotencyKey, currentRequestId, runWithIdempotencyKey, runWithRequestId } from './request-scope';
export {
  reconnectDelayMs,
  DEFAULT_MAX_RECONNECT_DELAY_MS,
  openRedisConnection,
  closeRedisConnection,
  pingRedis,
  isRedisStartWait,
} from './redis-connection';
