/**
 * The canonical path of a published agent's MCP endpoint:
 * `<basePath>/mcp/v1/{workspace}/{agent}`. The OAuth authorization server
 * compares an access token's audience with this path's URL.
 *
 * @param basePath `BASE_PATH` ('' or `/prefix`, no trailing slash)
 */
export function agentEndpointPath(basePath: string, workspace: string, slug: string): string {
  return `${basePath}/mcp/v1/${encodeURIComponent(workspace)}/${encodeURIComponent(slug)}`;
}

/**
 * The absolute URL of a published agent's MCP endpoint (docs/decisions.md "Admin APIs that round-trip"):
 * `<origin>/mcp/v1/{workspace}/{agent}`.
 *
 * @param origin `PUBLIC_URL` (it includes `BASE_PATH`), or the request's origin plus `BASE_PATH`; no trailing slash
 */
export function agentEndpointUrl(origin: string, workspace: string, slug: string): string {
  return `${origin}${agentEndpointPath('', workspace, slug)}`;
}

/**
 * The workspace and agent slug an agent endpoint path names, or undefined
 * for any other path (the inverse of {@link agentEndpointPath}; no
 * check that the agent exists).
 */
export function parseAgentEndpointPath(
  basePath: string,
  path: string,
): { workspace: string; slug: string } | undefined {
  const prefix = `${basePath}/mcp/v1/`;
  if (!path.startsWith(prefix)) return undefined;
  const parts = path.slice(prefix.length).replace(/\/$/, '').split('/');
  if (parts.length !== 2 || parts[0] === '' || parts[1] === '') return undefined;
  try {
    return { workspace: decodeURIComponent(parts[0] ?? ''), slug: decodeURIComponent(parts[1] ?? '') };
  } catch {
    return undefined;
  }
}
