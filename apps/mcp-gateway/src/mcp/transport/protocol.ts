import {
  ErrorCode,
  JSONRPCErrorResponseSchema,
  JSONRPCNotificationSchema,
  JSONRPCRequestSchema,
  JSONRPCResultResponseSchema,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type JSONRPCResultResponse,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { answerIdsOf } from '../../http/json-rpc-error';

/**
 * Protocol revisions the gateway speaks (MCP Streamable HTTP, §Protocol
 * Version Header), newest first. `initialize` gets the client's revision
 * when it is one of these, else the newest.
 */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;
export type ProtocolVersion = (typeof SUPPORTED_PROTOCOL_VERSIONS)[number];
export const LATEST_PROTOCOL_VERSION: ProtocolVersion = '2025-11-25';
/** What a request without `MCP-Protocol-Version` is taken to speak (2025-06-18 §Protocol Version Header). */
export const ASSUMED_PROTOCOL_VERSION: ProtocolVersion = '2025-03-26';

/** True when `value` names a supported revision. */
export function isSupportedVersion(value: string): value is ProtocolVersion {
  return (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(value);
}

/** The revision answered to an `initialize` that asked for `requested` (lifecycle §Version Negotiation). */
export function negotiateVersion(requested: string): ProtocolVersion {
  return isSupportedVersion(requested) ? requested : LATEST_PROTOCOL_VERSION;
}

/**
 * Reads the `MCP-Protocol-Version` header: absent → {@link ASSUMED_PROTOCOL_VERSION};
 * malformed (not `YYYY-MM-DD`) or unsupported → an error message for a 400.
 */
export function versionFromHeader(value: string | undefined): { version: ProtocolVersion } | { error: string } {
  if (value === undefined) return { version: ASSUMED_PROTOCOL_VERSION };
  const trimmed = value.trim();
  if (!/^\d{4}-\d{2}-\d{2}$/.test(trimmed)) return { error: 'Bad Request: MCP-Protocol-Version is malformed.' };
  if (!isSupportedVersion(trimmed)) {
    return {
      error: `Bad Request: Unsupported protocol version ${trimmed} (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}).`,
    };
  }
  return { version: trimmed };
}

/** JSON-RPC batches exist only in 2025-03-26; later revisions removed them. */
export function allowsBatch(version: ProtocolVersion): boolean {
  return version === '2025-03-26';
}

/** SSE priming events (an id and empty data, SEP-1699) are understood from 2025-11-25 on. */
export function understandsPriming(version: string): boolean {
  return version >= '2025-11-25';
}

/** One classified JSON-RPC message of a POST body. */
export type ClassifiedMessage =
  | { readonly kind: 'request'; readonly message: JSONRPCRequest }
  | { readonly kind: 'notification'; readonly message: JSONRPCNotification }
  | { readonly kind: 'response'; readonly message: JSONRPCResultResponse | JSONRPCErrorResponse }
  | { readonly kind: 'invalid'; readonly id: RequestId | null };

/** Sorts one parsed JSON value into request, notification, response or invalid (with its id when readable). */
export function classifyMessage(value: unknown): ClassifiedMessage {
  const request = JSONRPCRequestSchema.safeParse(value);
  if (request.success) return { kind: 'request', message: request.data };
  const notification = JSONRPCNotificationSchema.safeParse(value);
  if (notification.success) return { kind: 'notification', message: notification.data };
  const result = JSONRPCResultResponseSchema.safeParse(value);
  if (result.success) return { kind: 'response', message: result.data };
  const error = JSONRPCErrorResponseSchema.safeParse(value);
  if (error.success) return { kind: 'response', message: error.data };
  return { kind: 'invalid', id: idOf(value) };
}

/** The `id` of a JSON-RPC-looking object, `null` when there is none. */
export function idOf(value: unknown): RequestId | null {
  if (typeof value !== 'object' || value === null || !('id' in value)) return null;
  const id: unknown = value.id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)) ? id : null;
}

/** A JSON-RPC error thrown by a method handler; `data` travels as `error.data`. */
export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'JsonRpcError';
  }

  /** The error as a response to `id`. */
  toResponse(id: RequestId | null): OutgoingMessage {
    return errorResponse(id, this.code, this.message, this.data);
  }
}

/** An error response whose request id could not be read: JSON-RPC §5 sends `"id": null`. */
export interface NullIdErrorResponse {
  readonly jsonrpc: '2.0';
  readonly id: null;
  readonly error: { readonly code: number; readonly message: string; readonly data?: unknown };
}

/** Anything the gateway writes to a client: a JSON-RPC message, or an error answering an unreadable id. */
export type OutgoingMessage = JSONRPCMessage | NullIdErrorResponse;

/** `{jsonrpc, id, error: {code, message, data?}}`; a `null` id is sent as `null` (JSON-RPC §5). */
export function errorResponse(id: RequestId | null, code: number, message: string, data?: unknown): OutgoingMessage {
  const error = data === undefined ? { code, message } : { code, message, data };
  return id === null ? { jsonrpc: '2.0', id: null, error } : { jsonrpc: '2.0', id, error };
}

/**
 * The error answer to request body `body`, by id: one error for a single message,
 * one per request of a batch, `"id": null` only when no id is readable (http/json-rpc-error.ts
 * `answerIdsOf`).
 */
export function errorAnswer(
  body: unknown,
  code: number,
  message: string,
  data?: unknown,
): OutgoingMessage | OutgoingMessage[] {
  const ids = answerIdsOf(body);
  if (Array.isArray(body) && ids.length > 0) return ids.map((id) => errorResponse(id, code, message, data));
  return errorResponse(ids[0] ?? null, code, message, data);
}

/** True for a response (result or error) as opposed to a request or notification. */
export function isResponse(message: OutgoingMessage): boolean {
  return 'result' in message || 'error' in message;
}

/** `{jsonrpc, id, result}`. */
export function resultResponse(id: RequestId, result: Record<string, unknown>): JSONRPCResultResponse {
  return { jsonrpc: '2.0', id, result };
}

export const INVALID_PARAMS = ErrorCode.InvalidParams;
export const INVALID_REQUEST = ErrorCode.InvalidRequest;
export const METHOD_NOT_FOUND = ErrorCode.MethodNotFound;
export const INTERNAL_ERROR = ErrorCode.InternalError;
/** Sent for a request the client cancelled when an HTTP answer is still owed (JSON mode). */
export const REQUEST_CANCELLED = -32800;
