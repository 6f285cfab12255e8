import { TOOL_DEFINITIONS } from '../tools/tool-definitions';
import { SERVER_CAPABILITIES, initializeResult } from '../mcp-server';
import { declaresUiExtension, runInspectorContents, withInspectorMeta } from './mcp-apps';

const UI = 'io.modelcontextprotocol/ui';

describe('MCP Apps negotiation', () => {
  test.each([
    [{ extensions: { [UI]: {} } }, true],
    [{ extensions: { [UI]: { mimeTypes: ['text/html;profile=mcp-app'] } } }, true],
    [{ extensions: { [UI]: { mimeTypes: ['text/html'] } } }, false],
    [{ extensions: { 'io.example/other': {} } }, false],
    [{ extensions: { [UI]: true } }, false],
    [{}, false],
    [undefined, false],
  ])('client capabilities %j → %s', (caps, declared) => {
    expect(declaresUiExtension(caps)).toBe(declared);
  });

  test('initialize declares the extension back only to a client that declared it', () => {
    expect(initializeResult('2025-06-18', '1', { extensions: { [UI]: {} } }).capabilities.extensions).toEqual({
      [UI]: {},
    });
    expect(initializeResult('2025-06-18', '1', {}).capabilities).toBe(SERVER_CAPABILITIES);
  });

  test('only dagu_execute carries _meta.ui.resourceUri; the shared definitions stay untouched', () => {
    const tools = withInspectorMeta(TOOL_DEFINITIONS);
    expect(tools.map((t) => [t.name, t._meta])).toEqual([
      ['dagu_read', undefined],
      ['dagu_change', undefined],
      ['dagu_execute', { ui: { resourceUri: 'ui://dagu/run-inspector' } }],
    ]);
    expect(TOOL_DEFINITIONS.every((t) => t._meta === undefined)).toBe(true);
  });

  test('the resource contents are the HTML as given, with the MCP App MIME type', () => {
    expect(runInspectorContents('<!doctype html>').contents).toEqual([
      expect.objectContaining({
        uri: 'ui://dagu/run-inspector',
        mimeType: 'text/html;profile=mcp-app',
        text: '<!doctype html>',
      }),
    ]);
  });
});
