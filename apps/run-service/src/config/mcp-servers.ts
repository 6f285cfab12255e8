/**
 * `RUN_MCP_SERVERS` (dagu-actions §1.9 as amended): the MCP servers
 * `mcp.call` steps may name in `with.server`. JSON, name → URL string or
 * `{url, headers}`; header values may hold `${NAME}` references, resolved
 * against the step's environment when the step runs (so a secret comes from
 * the run's runtime profile, never from this setting or the YAML).
 */

/** One configured server. */
export interface McpServerEntry {
  /** Streamable HTTP endpoint (`http:` or `https:`). */
  readonly url: string;
  /** Request headers; values resolved at run time. */
  readonly headers: Readonly<Record<string, string>>;
}

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Parses the setting's JSON text (`''` = none).
 *
 * @throws Error naming what is wrong (not JSON, not an object, a bad name, URL or header)
 */
export function parseMcpServers(text: string): Readonly<Record<string, McpServerEntry>> {
  if (text.trim() === '') return {};
  const value: unknown = JSON.parse(text);
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Error('must be a JSON object: name → url or {url, headers}');
  const out: Record<string, McpServerEntry> = {};
  for (const [name, entry] of Object.entries(value)) {
    if (!NAME.test(name)) throw new Error(`server name "${name}" must be 1-64 of A-Z a-z 0-9 _ . -`);
    const raw: unknown = entry;
    const url =
      typeof raw === 'string' ? raw : typeof raw === 'object' && raw !== null && 'url' in raw ? raw.url : undefined;
    if (typeof url !== 'string' || !/^https?:\/\//.test(url))
      throw new Error(`server "${name}": url must be an http(s) URL`);
    const headers: Record<string, string> = {};
    const given = typeof raw === 'object' && raw !== null && 'headers' in raw ? raw.headers : undefined;
    if (given !== undefined) {
      if (given === null || typeof given !== 'object' || Array.isArray(given))
        throw new Error(`server "${name}": headers must be an object of strings`);
      for (const [key, headerValue] of Object.entries(given)) {
        if (typeof headerValue !== 'string') throw new Error(`server "${name}": header ${key} must be a string`);
        headers[key] = headerValue;
      }
    }
    out[name] = { url, headers };
  }
  return out;
}
