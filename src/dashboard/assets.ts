/**
 * The dashboard's static files. One stylesheet, served at /dashboard/style.css: the CSP allows
 * styles from this origin only, so no page carries inline styles.
 */
export const STYLE = `
:root { --fg: #1d2433; --muted: #5f6b7a; --line: #dde2ea; --bg: #f6f7f9; --card: #fff; --accent: #2f5bea; --ok: #1f8a4c; --bad: #c2352b; --warn: #b7791f; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
nav { display: flex; gap: 4px; align-items: center; padding: 0 24px; height: 48px; background: #151b2c; }
nav a, nav .brand, nav button.link { color: #cdd5e4; text-decoration: none; padding: 6px 10px; border-radius: 6px; font-size: 14px; }
nav a:hover, nav button.link:hover { background: #262f47; color: #fff; }
nav a[aria-current="page"] { background: #2f3a58; color: #fff; }
nav .brand { color: #fff; font-weight: 700; margin-right: 12px; padding-left: 0; }
nav form { margin-left: auto; }
button.link { background: none; border: 0; cursor: pointer; font: inherit; }
main { max-width: 1400px; margin: 0 auto; padding: 20px 24px 48px; }
h1 { font-size: 22px; margin: 4px 0 16px; }
h2 { font-size: 16px; margin: 24px 0 8px; }
section > h2:first-child { margin-top: 0; }
section, .card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; margin-bottom: 16px; }
table { border-collapse: collapse; width: 100%; background: var(--card); }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: middle; }
td.num, td.mono, td.when { white-space: nowrap; }
th { font-size: 12px; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:hover { background: #f0f3f8; }
.scroll { overflow-x: auto; border: 1px solid var(--line); border-radius: 8px; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
.muted { color: var(--muted); }
.sub { color: var(--muted); font-size: 12px; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; background: #e8ecf3; color: var(--muted); }
.badge.ok { background: #e3f4ea; color: var(--ok); }
.badge.bad { background: #fbe6e4; color: var(--bad); }
.badge.warn { background: #fbf0dc; color: var(--warn); }
.notice { padding: 10px 14px; border-radius: 8px; border: 1px solid; }
.notice.ok { background: #e9f6ee; border-color: #b7e0c6; }
.notice.error { background: #fdecea; border-color: #f3c0ba; }
.newkey code { display: inline-block; margin: 6px 0; padding: 6px 10px; background: #fff; border: 1px dashed var(--ok); font-size: 14px; user-select: all; }
form.inline { display: inline-flex; gap: 6px; align-items: center; margin: 0; }
form.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr)); gap: 10px 14px; align-items: end; }
label { display: flex; flex-direction: column; gap: 3px; font-size: 12px; color: var(--muted); }
input { font: inherit; padding: 5px 8px; border: 1px solid #c5ccd8; border-radius: 6px; background: #fff; color: var(--fg); }
input.amount { width: 80px; }
button { font: inherit; padding: 5px 12px; border-radius: 6px; border: 1px solid #c5ccd8; background: #fff; cursor: pointer; color: var(--fg); }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button:hover { filter: brightness(.96); }
.login { max-width: 380px; margin: 60px auto; }
.login form { display: flex; flex-direction: column; gap: 12px; }
.tabs { display: flex; gap: 6px; margin-bottom: 12px; }
.tabs a { padding: 4px 12px; border-radius: 6px; border: 1px solid var(--line); background: #fff; color: var(--fg); text-decoration: none; }
.tabs a[aria-current="page"] { background: var(--accent); color: #fff; border-color: var(--accent); }
.totals { display: flex; gap: 16px; flex-wrap: wrap; margin-bottom: 16px; }
.totals div { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 10px 16px; min-width: 150px; }
.totals b { display: block; font-size: 20px; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(560px, 1fr)); gap: 16px; }
.chart h2 { margin-top: 0; }
.chart > svg { width: 100%; height: auto; display: block; }
.chart text { font: 12px system-ui, sans-serif; fill: var(--muted); }
.legend { list-style: none; padding: 0; margin: 8px 0 0; display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 12px; }
.legend svg { width: 10px; height: 10px; vertical-align: -1px; margin-right: 5px; }
.empty { color: var(--muted); padding: 24px 0; text-align: center; }
`;

/** Its icon, /dashboard/icon.svg: without one, browsers ask for /favicon.ico, a 404 on every page. */
export const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#151b2c"/><path d="M4 4h8M8 4v8M4 12h4" stroke="#cdd5e4" stroke-width="2" fill="none"/></svg>`;
