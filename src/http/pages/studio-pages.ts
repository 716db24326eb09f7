// HTML shells of the studio, sign-up and dashboard pages. The markup works before any
// script runs (labels, headings, landmarks); the bundles in public/build add behaviour.
import { ASSET_NAME_MAX, ASSET_NAME_RULE } from '../../asset-name.js';
import { COMPILERS } from '../../quota/plans.js';
import { h } from './html.js';
import { outputPanel } from './output-panel.js';

export interface WebManifest {
  entries: Record<string, { js: string; preload: string[] }>;
  css: string;
  pdfWorker: string;
}

export type PageName = 'studio' | 'signup' | 'dashboard';

function dataAttributes(data: Record<string, string | number>): string {
  return Object.entries(data)
    .map(([name, value]) => ` data-${name}="${h(String(value))}"`)
    .join('');
}

const FAVICON =
  "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'%3E%3Crect width='32' height='32' rx='7' fill='%234f7ef0'/%3E%3Ctext x='16' y='23' font-family='Georgia,serif' font-size='20' fill='white' text-anchor='middle'%3EQ%3C/text%3E%3C/svg%3E";

const NAV: Array<{ page: PageName | 'gallery'; href: string; label: string }> = [
  { page: 'studio', href: '/studio', label: 'Studio' },
  { page: 'gallery', href: '/gallery', label: 'Gallery' },
  { page: 'dashboard', href: '/dashboard', label: 'Dashboard' },
  { page: 'signup', href: '/signup', label: 'Sign up' },
];

function layout(input: {
  page: PageName;
  title: string;
  manifest: WebManifest;
  data?: Record<string, string | number>;
  main: string;
}): string {
  const { page, manifest } = input;
  const entry = manifest.entries[page]!;
  const nav = NAV.map(
    (item) => `<a href="${item.href}"${item.page === page ? ' aria-current="page"' : ''}>${item.label}</a>`,
  ).join('');
  const preloads = entry.preload.map((file) => `<link rel="modulepreload" href="/build/${h(file)}">`).join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>${h(input.title)} · Quire</title>
<link rel="icon" href="${FAVICON}">
<link rel="stylesheet" href="/build/${h(manifest.css)}">
<script type="module" src="/build/${h(entry.js)}"></script>${preloads}
</head>
<body class="page-${page}"${dataAttributes(input.data ?? {})}>
<a class="skip-link" href="#main">Skip to content</a>
<header class="topbar">
<a class="brand" href="/studio"><span class="brand-mark" aria-hidden="true">Q</span>Quire</a>
<nav class="nav" aria-label="Main">${nav}<a href="/docs">API</a></nav>
<div class="account" id="account"></div>
</header>
${input.main}
</body>
</html>
`;
}

const SAMPLE = String.raw`\documentclass{article}
\usepackage[T1]{fontenc}

\title{Hello from Quire}
\author{The Studio}

\begin{document}
\maketitle

Write \LaTeX{} in the editor and press \textbf{Compile}
(Ctrl+Enter, or Cmd+Enter on a Mac) to see the PDF.

\section{Mathematics}
Euler's identity: \[ e^{i\pi} + 1 = 0. \]

\end{document}
`;

export function studioPage(manifest: WebManifest, data: { anonLimit: number; anonRemaining: number; texlive: readonly string[] }): string {
  const options = COMPILERS.map((c) => `<option value="${c}">${c}</option>`).join('');
  // The TeX Live years this server serves, newest (the default) first; none: the host's.
  const years = data.texlive.map((year) => `<option value="${year}">TeX Live ${year}</option>`).join('');
  const picker = data.texlive.length > 1 ? `
  <div class="field-inline">
    <label for="texlive">TeX Live</label>
    <select id="texlive" name="texlive">${years}</select>
  </div>` : '';
  return layout({
    page: 'studio',
    title: 'Studio',
    manifest,
    data: {
      'pdf-worker': `/build/${manifest.pdfWorker}`,
      'anon-limit': data.anonLimit,
      'anon-remaining': data.anonRemaining,
    },
    main: `<main id="main" class="studio">
<h1 class="visually-hidden">LaTeX studio</h1>
<div class="toolbar">
  <div class="field-inline">
    <label for="compiler">Compiler</label>
    <select id="compiler" name="compiler">${options}</select>
  </div>${picker}
  ${outputPanel()}
  <button type="button" id="compile" class="button primary" aria-keyshortcuts="Control+Enter Meta+Enter">
    Compile <kbd class="shortcut" aria-hidden="true">Ctrl+Enter</kbd>
  </button>
  <button type="button" id="save-template" class="button" hidden>Save template</button>
  <button type="button" id="copy-link" class="button">Copy link</button>
  <p id="status" class="status" role="status" aria-live="polite"></p>
  <p id="quota" class="quota"></p>
</div>
<p id="template-banner" class="banner" hidden></p>
<div class="workspace">
  <section class="pane editor-pane" aria-labelledby="editor-heading">
    <h2 id="editor-heading" class="pane-title">Source</h2>
    <div id="editor" class="editor">
      <label for="source" class="visually-hidden">LaTeX source</label>
      <textarea id="source" class="source-fallback" spellcheck="false">${h(SAMPLE)}</textarea>
    </div>
    <section id="diagnosis" class="diagnosis" aria-labelledby="diagnosis-title" tabindex="-1" hidden></section>
    <section id="problems" class="problems" aria-labelledby="problems-title" hidden></section>
  </section>
  <section class="pane pdf-pane" aria-labelledby="pdf-heading">
    <div class="pane-head">
      <h2 id="pdf-heading" class="pane-title">PDF</h2>
      <a id="open-pdf" class="pane-link" href="#" target="_blank" rel="noopener" hidden>Open PDF</a>
    </div>
    <div id="pdf" class="pdf" aria-live="polite" aria-busy="false">
      <p class="placeholder">Compile to see your document here.</p>
    </div>
  </section>
</div>
<dialog id="save-dialog" aria-labelledby="save-title">
  <form method="dialog" id="save-form" class="stack">
    <h2 id="save-title">Save as template</h2>
    <label for="template-name">Template name</label>
    <input id="template-name" name="name" required maxlength="100" autocomplete="off">
    <p id="save-error" class="error-text" role="alert"></p>
    <div class="actions">
      <button type="submit" class="button primary" value="save">Save</button>
      <button type="button" class="button" data-close>Cancel</button>
    </div>
  </form>
</dialog>
</main>`,
  });
}

export function signupPage(manifest: WebManifest, open: boolean): string {
  const body = open
    ? `<form id="signup-form" class="card stack" novalidate>
  <label for="email">Email address</label>
  <input id="email" name="email" type="email" required autocomplete="email" maxlength="254" aria-describedby="email-hint email-error">
  <p id="email-hint" class="hint">You get a Free account: 50 compiles a month, pdflatex and xelatex, up to 5 pages per document.</p>
  <p id="email-error" class="error-text" role="alert"></p>
  <button type="submit" class="button primary">Create account</button>
</form>
<section id="signup-result" class="card stack" aria-labelledby="result-title" tabindex="-1" hidden>
  <h2 id="result-title">Your API key</h2>
  <p>This is the only time the key is shown. Copy it now and keep it secret.</p>
  <div class="key-row"><code id="new-key" class="key"></code><button type="button" class="button" id="copy-key">Copy key</button></div>
  <p id="copy-status" class="hint" role="status"></p>
  <p>Use it as <code>Authorization: Bearer &lt;key&gt;</code>, or in this browser:</p>
  <p class="actions"><a class="button primary" href="/studio">Open the studio</a><a class="button" href="/dashboard">Go to the dashboard</a></p>
</section>`
    : `<section class="card stack" aria-labelledby="closed-title">
  <h2 id="closed-title">Sign-up is closed on this server</h2>
  <p>Accounts here are created by the operator. Ask them to run:</p>
  <pre class="code">quire account create --email you@example.com --plan free</pre>
  <p>The command prints your API key once. With it you can sign in on the <a href="/dashboard">dashboard</a>
  and compile with your plan in the <a href="/studio">studio</a>. Without a key the studio still compiles a few
  documents a day.</p>
</section>`;
  return layout({
    page: 'signup',
    title: 'Sign up',
    manifest,
    data: { signup: open ? 'open' : 'closed' },
    main: `<main id="main" class="narrow">
<h1>Create a Quire account</h1>
${body}
</main>`,
  });
}

export function dashboardPage(manifest: WebManifest): string {
  return layout({
    page: 'dashboard',
    title: 'Dashboard',
    manifest,
    main: `<main id="main" class="dashboard">
<h1>Dashboard</h1>
<section id="signin" class="card stack narrow-card" aria-labelledby="signin-title">
  <h2 id="signin-title">Sign in with your API key</h2>
  <form id="signin-form" class="stack" novalidate>
    <label for="signin-key">API key</label>
    <input id="signin-key" name="key" type="password" required autocomplete="off" spellcheck="false" aria-describedby="signin-error">
    <label class="check"><input type="checkbox" id="remember" checked> Remember the key in this browser</label>
    <p id="signin-error" class="error-text" role="alert"></p>
    <button type="submit" class="button primary">Sign in</button>
  </form>
  <p class="hint">No key yet? <a href="/signup">Sign up</a> or ask your operator.</p>
</section>
<div id="panels" hidden>
  <section class="card" aria-labelledby="plan-title">
    <div class="card-head"><h2 id="plan-title" tabindex="-1">Plan and usage</h2><span id="plan-badge" class="badge"></span></div>
    <p id="account-email" class="hint"></p>
    <div id="meters" class="meters"></div>
  </section>
  <section class="card stack" aria-labelledby="key-title">
    <h2 id="key-title">API key</h2>
    <p>Current key: <code id="key-prefix"></code>… created <span id="key-created"></span></p>
    <p class="hint">Rotating issues a new key and revokes this one at once. Templates and assets stay.</p>
    <div><button type="button" id="rotate" class="button danger">Rotate key</button></div>
    <div id="rotated" class="stack" hidden>
      <p><strong>Your new key</strong> (shown once; this browser now uses it):</p>
      <div class="key-row"><code id="rotated-key" class="key"></code><button type="button" class="button" id="copy-rotated">Copy key</button></div>
    </div>
    <p id="key-status" class="hint" role="status"></p>
  </section>
  <section class="card stack" aria-labelledby="webhook-title">
    <h2 id="webhook-title">Webhook signing secret</h2>
    <p class="hint">Async jobs with a <code>callback_url</code> sign each webhook with this secret (Standard Webhooks). Rotating replaces it at once.</p>
    <div class="key-row"><code id="webhook-secret" class="key">••••••••</code><button type="button" class="button" id="show-webhook-secret">Show</button><button type="button" class="button danger" id="rotate-webhook-secret">Rotate</button></div>
    <p id="webhook-status" class="hint" role="status"></p>
  </section>
  <section class="card stack" aria-labelledby="templates-title">
    <div class="card-head"><h2 id="templates-title">Templates</h2><a class="button" href="/studio">New in studio</a></div>
    <div id="templates"></div>
  </section>
  <section class="card stack" aria-labelledby="assets-title">
    <h2 id="assets-title">Asset library</h2>
    <form id="upload-form" class="upload stack">
      <div class="field-row">
        <div class="stack">
          <label for="asset-file">File (png, jpg, pdf or svg)</label>
          <input id="asset-file" type="file" accept=".png,.jpg,.jpeg,.pdf,.svg" required>
        </div>
        <div class="stack">
          <label for="asset-name">Name used in LaTeX</label>
          <input id="asset-name" maxlength="${ASSET_NAME_MAX}" autocomplete="off" spellcheck="false" aria-describedby="asset-name-hint">
        </div>
        <button type="submit" class="button primary">Upload</button>
      </div>
      <p id="asset-name-hint" class="hint">${ASSET_NAME_RULE[0]!.toUpperCase()}${ASSET_NAME_RULE.slice(1)}, e.g. logo.png. Use it with <code>\\includegraphics{logo.png}</code> and the compile field <code>use_stored_assets</code>.</p>
      <p id="upload-status" class="hint" role="status"></p>
    </form>
    <div id="assets"></div>
  </section>
  <p><button type="button" id="signout" class="button">Sign out of this browser</button></p>
</div>
</main>`,
  });
}

export function unbuiltPage(): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Quire</title></head>
<body><main><h1>The web interface is not built</h1><p>Run <code>npm run build</code> and restart the server.</p></main></body></html>
`;
}
