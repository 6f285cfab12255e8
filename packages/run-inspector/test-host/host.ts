/**
 * A minimal MCP Apps host for tests (issue 27): renders an app's HTML in a sandboxed
 * iframe and connects it through the ext-apps host bridge (`AppBridge` over
 * `PostMessageTransport`). Tool calls the app makes are handed to `window.hostCallTool`,
 * which the test exposes and answers with the real MCP SDK client against the running
 * gateway. Bundled by the e2e test with esbuild; never shipped.
 */
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';
import type { CallToolRequest, CallToolResult } from '@modelcontextprotocol/client';

/** What the test page exposes to and calls on the host. */
interface HostWindow extends Window {
  /** Answers the app's `tools/call` (exposed by the test). */
  hostCallTool?: (params: CallToolRequest['params']) => Promise<CallToolResult>;
  /** Renders `html` and hands it the tool input and result once the app initialised. */
  renderApp?: (html: string, toolInput: Record<string, unknown>, toolResult: CallToolResult) => Promise<void>;
  /** Tool calls the app made, in order, by tool name (for assertions). */
  appToolCalls?: string[];
}

const host: HostWindow = window;
host.appToolCalls = [];

host.renderApp = async (html, toolInput, toolResult) => {
  const frame = document.createElement('iframe');
  frame.setAttribute('sandbox', 'allow-scripts');
  frame.title = 'MCP App';
  frame.srcdoc = html;
  document.getElementById('apps')?.append(frame);
  const target = frame.contentWindow;
  if (target === null) throw new Error('the app frame has no window');
  const bridge = new AppBridge(
    null,
    { name: 'dagu-mcp-test-host', version: '1.0.0' },
    { serverTools: {}, logging: {} },
    { hostContext: { theme: 'light', displayMode: 'inline' } },
  );
  bridge.oncalltool = async (params) => {
    host.appToolCalls?.push(params.name);
    const call = host.hostCallTool;
    if (call === undefined) throw new Error('the test exposed no hostCallTool');
    return call(params);
  };
  bridge.onsizechange = ({ height }) => {
    if (height !== undefined) frame.style.height = `${height}px`;
  };
  const initialised = new Promise<void>((resolve) => {
    bridge.oninitialized = () => resolve();
  });
  await bridge.connect(new PostMessageTransport(target, target));
  await initialised;
  await bridge.sendToolInput({ arguments: toolInput });
  await bridge.sendToolResult(toolResult);
};
