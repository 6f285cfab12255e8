/**
 * The one stylesheet of the server-rendered pages (`GET <BASE_PATH>/assets/pages.css`):
 * system fonts, no third-party assets, contrast above WCAG AA, visible focus rings,
 * usable in a narrow window.
 */
export const PAGES_CSS = `
:root { color-scheme: light dark; --fg: #1b1f24; --muted: #57606a; --bg: #f6f8fa; --card: #ffffff;
  --line: #d0d7de; --accent: #0b5cad; --accent-fg: #ffffff; --danger: #b42318; --focus: #f59e0b; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --muted: #9da7b3; --bg: #0d1117; --card: #161b22; --line: #30363d;
    --accent: #4493f8; --accent-fg: #0d1117; --danger: #ff7b72; }
}
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; display: flex; align-items: flex-start; justify-content: center;
  background: var(--bg); color: var(--fg); font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
.card { width: min(28rem, 100% - 2rem); margin: 4rem 1rem; padding: 2rem; background: var(--card);
  border: 1px solid var(--line); border-radius: 12px; }
.card.wide, .card:has(table) { width: min(56rem, 100% - 2rem); }
.brand { margin: 0 0 1rem; font-weight: 700; letter-spacing: .02em; color: var(--muted); }
h1 { font-size: 1.4rem; margin: 0 0 1rem; }
p { margin: 0 0 1rem; }
.muted { color: var(--muted); }
label { display: block; font-weight: 600; margin: 0 0 .25rem; }
input[type=text], input[type=password] { width: 100%; padding: .6rem .7rem; margin: 0 0 1rem;
  font: inherit; color: inherit; background: transparent; border: 1px solid var(--line); border-radius: 8px; }
button, .button { display: inline-block; padding: .6rem 1.1rem; font: inherit; font-weight: 600; border-radius: 8px;
  border: 1px solid var(--accent); background: var(--accent); color: var(--accent-fg); cursor: pointer; text-decoration: none; }
button.secondary { background: transparent; color: var(--fg); border-color: var(--line); }
button.danger { background: transparent; color: var(--danger); border-color: var(--danger); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.actions { display: flex; gap: .75rem; flex-wrap: wrap; margin-top: 1rem; }
.error { padding: .6rem .8rem; margin: 0 0 1rem; border: 1px solid var(--danger); border-radius: 8px; color: var(--danger); }
.badge { display: inline-block; padding: 0 .45rem; border: 1px solid var(--line); border-radius: 999px; font-size: .8rem; color: var(--muted); }
ul.scopes, ul.tools { padding-left: 1.2rem; margin: 0 0 1rem; }
fieldset.scopes { border: 1px solid var(--line); border-radius: 6px; margin: 0 0 1rem; padding: .5rem .9rem; }
fieldset.scopes legend { padding: 0 .3rem; }
fieldset.scopes div { margin: .35rem 0; }
fieldset.scopes label { font-weight: normal; }
table { width: 100%; border-collapse: collapse; margin: 0 0 1rem; }
th, td { text-align: left; padding: .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .9em; }
`;
