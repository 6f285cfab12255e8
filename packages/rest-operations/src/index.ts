/**
 * REST operations as tools: the operation version's shape, tool input → upstream
 * request, the upstream call, the tool result, input validation, and OpenAPI import. No
 * storage and no MCP: the service that owns operations uses these.
 */
export * from './operation';
export * from './build-request';
export * from './call-upstream';
export * from './tool-result';
export * from './input-validator';
export * from './openapi-import';
