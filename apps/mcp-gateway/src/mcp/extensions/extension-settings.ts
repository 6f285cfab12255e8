import type { Pool } from '@dagu-mcp/runtime';
import { ExtensionSettingsSchema, type ExtensionSettings } from '@dagu-mcp/contracts';

/**
 * Which extensions an admin enabled, kept in the gateway's `settings`
 * table under `extension:<name>` (JSON {@link ExtensionSettings}) so every replica agrees
 * and no migration is needed. Read through {@link ServedExtensions}, which caches.
 */
export class ExtensionSettingsStore {
  constructor(private readonly pool: Pool) {}

  /** Every stored switch, by extension name (malformed rows are skipped). */
  async list(): Promise<Map<string, ExtensionSettings>> {
    const { rows } = await this.pool.query<{ key: string; value: string }>(
      "SELECT key, value FROM settings WHERE key LIKE 'extension:%' ORDER BY key",
    );
    const out = new Map<string, ExtensionSettings>();
    for (const row of rows) {
      const parsed = ExtensionSettingsSchema.safeParse(safeJson(row.value));
      if (parsed.success) out.set(row.key.slice('extension:'.length), parsed.data);
    }
    return out;
  }

  /** Stores extension `name`'s switch (replaces the previous one). */
  async put(name: string, settings: ExtensionSettings): Promise<void> {
    await this.pool.query(
      'INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value',
      [`extension:${name}`, JSON.stringify(settings)],
    );
  }
}

/** One extension the gateway serves now. */
export interface ServedExtension {
  readonly name: string;
  /**
   * A protocol test fixture (`MCP_TEST_FIXTURE_EXTENSIONS`): served as announced — names not
   * namespaced, calls relayed as is without role or schema checks. False for every other
   * extension (`MCP_EXTENSIONS` and admin-enabled ones): namespaced, min role and input schema enforced.
   */
  readonly verbatim: boolean;
  /** Where it is served from: a fixture, the static `MCP_EXTENSIONS` list, or an admin's switch. */
  readonly source: 'fixture' | 'static' | 'switch';
  /** Own tool names served (switch only); absent: all. */
  readonly allowedTools?: readonly string[];
}

/**
 * The extensions to serve, in precedence order (the first to claim a name or URI keeps it):
 * the test fixtures (`MCP_TEST_FIXTURE_EXTENSIONS`, served as announced), the static
 * `MCP_EXTENSIONS` list, then those an admin enabled, by name. Re-read at most every
 * `cacheMs` (default 1000 ms), so a switch reaches every replica within about a second.
 */
export class ServedExtensions {
  private cached: { at: number; value: Promise<ServedExtension[]> } | undefined;

  constructor(
    private readonly options: {
      /** `MCP_EXTENSIONS`: served like enabled ones (namespaced, checked), by configuration. */
      readonly staticNames: readonly string[];
      /** `MCP_TEST_FIXTURE_EXTENSIONS`: served as announced (tests only); default none. */
      readonly fixtureNames?: readonly string[];
      readonly store?: ExtensionSettingsStore;
      readonly cacheMs?: number;
    },
  ) {}

  /** The names the configuration decides (fixtures and `MCP_EXTENSIONS`): an admin switch does not apply to them. */
  get configuredNames(): readonly string[] {
    return [...new Set([...(this.options.fixtureNames ?? []), ...this.options.staticNames])];
  }

  /** The extensions served now (a failed settings read serves the configured ones only). */
  async served(): Promise<ServedExtension[]> {
    const now = Date.now();
    if (this.cached === undefined || now - this.cached.at > (this.options.cacheMs ?? 1000))
      this.cached = { at: now, value: this.load() };
    return this.cached.value;
  }

  /** Forgets the cache (after a local `PUT`). */
  invalidate(): void {
    this.cached = undefined;
  }

  private async load(): Promise<ServedExtension[]> {
    const fixtures = this.options.fixtureNames ?? [];
    const served: ServedExtension[] = [
      ...fixtures.map((name): ServedExtension => ({ name, verbatim: true, source: 'fixture' })),
      ...this.options.staticNames
        .filter((name) => !fixtures.includes(name))
        .map((name): ServedExtension => ({ name, verbatim: false, source: 'static' })),
    ];
    const configured = this.configuredNames;
    const settings = await this.options.store?.list().catch(() => undefined);
    for (const [name, s] of settings ?? []) {
      if (!s.enabled || configured.includes(name)) continue;
      served.push({
        name,
        verbatim: false,
        source: 'switch',
        ...(s.allowedTools !== undefined ? { allowedTools: s.allowedTools } : {}),
      });
    }
    return served;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
