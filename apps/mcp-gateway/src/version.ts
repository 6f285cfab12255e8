/** The gateway's version, reported as MCP `serverInfo.version` and by `GET /api/v1/health`. */
export const GATEWAY_VERSION = '0.1.0';
