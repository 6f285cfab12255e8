import { ExtensionToolNameSchema, type ExtensionCatalog, type Role } from '@dagu-mcp/contracts';
import type { ServedExtension } from './extension-settings';

/**
 * What the gateway serves of the running extensions' catalogs (docs/extending.md "What the gateway guarantees"): pure, so every rule is unit-tested.
 *
 * - **Tools and prompts are namespaced** `<extension>.<own name>`; an own name is
 *   `[A-Za-z0-9_-]{1,64}` (no dot), so a served name cannot equal a built-in one or another
 *   extension's. A test fixture (`verbatim`) keeps the names it announces.
 * - **Resources keep their URIs**, but none may shadow the gateway's (`dagu:` and
 *   `ui://dagu/`) or an earlier extension's: a resource, template or `uriPrefixes` entry that
 *   overlaps one is not served. Every URI needs a scheme.
 * - Whatever is refused is left out (and reported through `warn`); the rest of that catalog is served.
 * - Precedence is the order of `entries` (fixtures, `MCP_EXTENSIONS`, then enabled by name).
 */

/** URI prefixes the gateway serves itself (lower case): no extension resource may fall under or cover one. */
export const RESERVED_URI_PREFIXES = ['dagu:', 'ui://dagu/'] as const;

/** One extension tool as served: which extension answers it, under which own name, and who may call it. */
export interface ServedTool {
  readonly extension: string;
  /** A test fixture's tool: relayed as is, without role or schema checks. */
  readonly verbatim: boolean;
  /** The tool's name inside its extension (what the extension is asked to run). */
  readonly ownName: string;
  readonly minRole: Role;
  readonly inputSchema: Record<string, unknown> | undefined;
  /** The MCP `Tool` as `tools/list` shows it (served name, no `minRole`). */
  readonly definition: Record<string, unknown> & { readonly name: string };
}

/** One extension prompt as served. */
export interface ServedPrompt {
  readonly extension: string;
  /** The prompt's name inside its extension. */
  readonly ownName: string;
}

/** A catalog with the extension that registered it, as served (renamed, filtered). */
export interface OwnedCatalog {
  readonly name: string;
  readonly verbatim: boolean;
  readonly catalog: ExtensionCatalog;
}

/** Everything served of the extensions, by served name. */
export interface ServedView {
  readonly catalogs: OwnedCatalog[];
  readonly tools: Map<string, ServedTool>;
  readonly prompts: Map<string, ServedPrompt>;
}

/** Names the gateway keeps for itself. */
export interface ReservedNames {
  readonly tools: readonly string[];
  readonly prompts: readonly string[];
}

/** Reports one refused entry: the extension, what was refused, and why. */
export type RefusalReporter = (fields: { extension: string; kind: string; value: string }, reason: string) => void;

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/** True when either string (lower-cased) starts with the other: routing by one would catch the other's URIs. */
function overlaps(a: string, b: string): boolean {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x.startsWith(y) || y.startsWith(x);
}

/** The literal head of a URI template (up to its first `{`): what the template can match at most. */
function templateHead(uriTemplate: string): string {
  const brace = uriTemplate.indexOf('{');
  return brace === -1 ? uriTemplate : uriTemplate.slice(0, brace);
}

/** URIs claimed by the extensions served so far. */
class UriClaims {
  private readonly prefixes: string[] = [...RESERVED_URI_PREFIXES];
  private readonly exact: string[] = [];

  /** Why a resource URI may not be served, or undefined. */
  refuseResource(uri: string): string | undefined {
    if (!SCHEME.test(uri)) return 'has no URI scheme';
    const lower = uri.toLowerCase();
    if (RESERVED_URI_PREFIXES.some((r) => lower.startsWith(r))) return 'is under a URI scheme the gateway serves';
    if (this.prefixes.some((p) => lower.startsWith(p)) || this.exact.includes(lower))
      return "is another extension's URI";
    return undefined;
  }

  /** Why a URI prefix (or a template's head) may not be served, or undefined. */
  refusePrefix(prefix: string): string | undefined {
    if (!SCHEME.test(prefix)) return 'has no URI scheme';
    if (RESERVED_URI_PREFIXES.some((r) => overlaps(prefix, r))) return 'overlaps a URI scheme the gateway serves';
    const lower = prefix.toLowerCase();
    if (this.prefixes.some((p) => overlaps(prefix, p)) || this.exact.some((u) => u.startsWith(lower)))
      return "overlaps another extension's URIs";
    return undefined;
  }

  /** Adds what one extension kept, once its whole catalog was checked (it never conflicts with itself). */
  claim(prefixes: readonly string[], exact: readonly string[]): void {
    this.prefixes.push(...prefixes.map((p) => p.toLowerCase()));
    this.exact.push(...exact.map((u) => u.toLowerCase()));
  }
}

/**
 * Builds the served view of the running extensions' catalogs.
 *
 * @param entries each served extension with its parsed catalog, in precedence order
 * @param reserved the gateway's own tool and prompt names
 * @param warn called once per refused tool, prompt, resource, template or URI prefix
 */
export function serveCatalogs(
  entries: ReadonlyArray<{ readonly extension: ServedExtension; readonly catalog: ExtensionCatalog }>,
  reserved: ReservedNames,
  warn: RefusalReporter,
): ServedView {
  const takenTools = new Set(reserved.tools);
  const takenPrompts = new Set(reserved.prompts);
  const tools = new Map<string, ServedTool>();
  const prompts = new Map<string, ServedPrompt>();
  const uris = new UriClaims();
  const catalogs: OwnedCatalog[] = [];
  for (const { extension: ext, catalog } of entries) {
    const refuse = (kind: string, value: string, reason: string): void =>
      warn({ extension: ext.name, kind, value }, reason);
    const servedName = (own: string): string => (ext.verbatim ? own : `${ext.name}.${own}`);

    const listedTools: ExtensionCatalog['tools'] = [];
    for (const tool of catalog.tools) {
      if (!ext.verbatim && !ExtensionToolNameSchema.safeParse(tool.name).success) {
        refuse('tool', tool.name, 'the name is not letters, digits, "_" or "-" (at most 64)');
        continue;
      }
      if (ext.allowedTools !== undefined && !ext.allowedTools.includes(tool.name)) continue;
      const name = servedName(tool.name);
      if (takenTools.has(name)) {
        refuse('tool', name, 'the name is taken');
        continue;
      }
      takenTools.add(name);
      const { minRole, ...rest } = tool;
      const definition = { ...rest, name };
      listedTools.push(definition);
      tools.set(name, {
        extension: ext.name,
        verbatim: ext.verbatim,
        ownName: tool.name,
        minRole: minRole ?? 'viewer',
        inputSchema: tool.inputSchema,
        definition,
      });
    }

    const listedPrompts: ExtensionCatalog['prompts'] = [];
    for (const prompt of catalog.prompts) {
      if (!ext.verbatim && !ExtensionToolNameSchema.safeParse(prompt.name).success) {
        refuse('prompt', prompt.name, 'the name is not letters, digits, "_" or "-" (at most 64)');
        continue;
      }
      const name = servedName(prompt.name);
      if (takenPrompts.has(name)) {
        refuse('prompt', name, 'the name is taken');
        continue;
      }
      takenPrompts.add(name);
      listedPrompts.push({ ...prompt, name });
      prompts.set(name, { extension: ext.name, ownName: prompt.name });
    }

    const keep = <T>(
      items: readonly T[],
      kind: string,
      value: (item: T) => string,
      why: (v: string) => string | undefined,
    ) =>
      items.filter((item) => {
        const reason = why(value(item));
        if (reason !== undefined) refuse(kind, value(item), reason);
        return reason === undefined;
      });
    const uriPrefixes = keep(
      catalog.uriPrefixes,
      'uriPrefix',
      (p) => p,
      (p) => uris.refusePrefix(p),
    );
    const resourceTemplates = keep(
      catalog.resourceTemplates,
      'resourceTemplate',
      (t) => t.uriTemplate,
      (t) => uris.refusePrefix(templateHead(t)),
    );
    const resources = keep(
      catalog.resources,
      'resource',
      (r) => r.uri,
      (u) => uris.refuseResource(u),
    );
    uris.claim(
      [...uriPrefixes, ...resourceTemplates.map((t) => templateHead(t.uriTemplate))],
      resources.map((r) => r.uri),
    );

    catalogs.push({
      name: ext.name,
      verbatim: ext.verbatim,
      catalog: { tools: listedTools, prompts: listedPrompts, resources, resourceTemplates, uriPrefixes },
    });
  }
  return { catalogs, tools, prompts };
}
