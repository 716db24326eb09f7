// The dashboard: plan and usage, key rotation, saved templates and the asset library.
import { api, ApiError, forgetKey, keyRemembered, storedKey, storeKey, type Usage } from './lib/api';
import { mountAccount } from './lib/account';
import { $, copyText, formatBytes, formatDate, h } from './lib/dom';

const signin = $('#signin');
const panels = $('#panels');
const account = mountAccount((usage) => (usage ? show(usage) : signedOut()));

function signedOut(): void {
  panels.hidden = true;
  signin.hidden = false;
  account.render(null);
}

$<HTMLFormElement>('#signin-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const input = $<HTMLInputElement>('#signin-key');
  const error = $('#signin-error');
  const key = input.value.trim();
  error.textContent = '';
  if (!key) {
    error.textContent = 'Enter your API key.';
    input.focus();
    return;
  }
  try {
    const usage = await api<Usage>('/api/v1/usage', { key });
    storeKey(key, $<HTMLInputElement>('#remember').checked);
    input.value = '';
    await show(usage);
    $('#plan-title').focus();
  } catch (err) {
    error.textContent = err instanceof ApiError && err.status === 401 ? 'That key is not valid: it is unknown, revoked or mistyped.' : (err as Error).message;
    input.setAttribute('aria-invalid', 'true');
    input.focus();
  }
});

async function show(usage: Usage): Promise<void> {
  signin.hidden = true;
  panels.hidden = false;
  account.render(usage);
  renderUsage(usage);
  await Promise.all([loadTemplates(usage), loadAssets(usage)]);
}

async function refresh(): Promise<void> {
  const usage = await api<Usage>('/api/v1/usage');
  account.render(usage);
  renderUsage(usage);
}

function meter(label: string, used: number, limit: number | null, format: (n: number) => string, note?: string): HTMLElement {
  const id = `meter-${label.toLowerCase().replace(/\W+/g, '-')}`;
  const text = limit === null ? `${format(used)} (no limit)` : `${format(used)} of ${format(limit)}`;
  const bar =
    limit === null || limit === 0
      ? h('div', { class: 'meter-empty' })
      : h('progress', { id, max: String(limit), value: String(Math.min(used, limit)), 'aria-label': `${label}: ${text}` });
  const full = limit !== null && limit > 0 && used >= limit;
  return h(
    'div',
    { class: `meter${full ? ' full' : ''}` },
    h('div', { class: 'meter-head' }, h('span', { class: 'meter-label' }, label), h('span', { class: 'meter-value' }, text)),
    bar,
    note ? h('p', { class: 'hint' }, note) : null,
  );
}

function renderUsage(usage: Usage): void {
  $('#plan-badge').textContent = `${usage.user.plan} plan`;
  $('#account-email').textContent = usage.user.email;
  const n = (x: number) => x.toLocaleString();
  const s = usage.stored_assets;
  const meters = [
    meter('Compiles this month', usage.usage.used_this_month, usage.usage.monthly_limit, n, `Resets ${formatDate(usage.usage.resets_at)}.`),
    meter('Saved templates', usage.templates.count, usage.templates.limit, n, usage.templates.limit === 0 ? 'Saved templates need a paid plan.' : undefined),
    meter('Stored assets', s.count, s.count_limit, n, s.count_limit === 0 ? 'The asset library needs a paid plan.' : undefined),
    meter('Asset storage', s.total_bytes, s.total_bytes_limit, formatBytes),
  ];
  $('#meters').replaceChildren(...meters);
  $('#key-prefix').textContent = usage.api_key.prefix;
  $('#key-created').textContent = formatDate(usage.api_key.created_at);
}

// ---- Key rotation -------------------------------------------------------------------------

$('#rotate').addEventListener('click', async () => {
  if (!confirm('Rotate the key? The current key stops working immediately.')) return;
  const keyStatus = $('#key-status');
  try {
    const res = await api<{ api_key: string; prefix: string; created_at: string }>('/api/v1/api_key/rotate', { method: 'POST' });
    storeKey(res.api_key, keyRemembered());
    $('#rotated-key').textContent = res.api_key;
    $('#rotated').hidden = false;
    keyStatus.textContent = 'Key rotated. Update every program that used the old key.';
    await refresh();
  } catch (err) {
    keyStatus.textContent = `Rotation failed: ${(err as Error).message}`;
  }
});
$('#copy-rotated').addEventListener('click', async () => {
  $('#key-status').textContent = (await copyText($('#rotated-key').textContent ?? '')) ? 'New key copied.' : 'Select the key and copy it.';
});

// ---- Webhook secret ------------------------------------------------------------------------

async function showWebhookSecret(rotate: boolean): Promise<void> {
  const status = $('#webhook-status');
  try {
    const path = rotate ? '/api/v1/webhooks/secret/rotate' : '/api/v1/webhooks/secret';
    const res = await api<{ secret: string }>(path, rotate ? { method: 'POST' } : {});
    $('#webhook-secret').textContent = res.secret;
    status.textContent = rotate ? 'Secret rotated: webhooks from now on are signed with this one.' : '';
  } catch (err) {
    status.textContent = `Could not read the secret: ${(err as Error).message}`;
  }
}
$('#show-webhook-secret').addEventListener('click', () => void showWebhookSecret(false));
$('#rotate-webhook-secret').addEventListener('click', () => {
  if (confirm('Rotate the webhook secret? Receivers must switch to the new one.')) void showWebhookSecret(true);
});

// ---- Templates -----------------------------------------------------------------------------

interface TemplateRow {
  id: number;
  name: string;
  description?: string;
  updated_at: string;
  latex_size_bytes: number;
}

async function loadTemplates(usage: Usage): Promise<void> {
  const box = $('#templates');
  if (usage.templates.limit === 0) {
    box.replaceChildren(h('p', { class: 'hint' }, `Saved templates come with paid plans. Your ${usage.user.plan} plan compiles from the studio or the API.`));
    return;
  }
  try {
    const res = await api<{ templates: TemplateRow[] }>('/api/v1/templates');
    if (res.templates.length === 0) {
      box.replaceChildren(h('p', { class: 'hint' }, 'No templates yet. Write one in the studio and press “Save template”.'));
      return;
    }
    const rows = res.templates.map((t) =>
      h(
        'tr',
        {},
        h('th', { scope: 'row' }, t.name, t.description ? h('span', { class: 'sub' }, t.description) : null),
        h('td', {}, formatBytes(t.latex_size_bytes)),
        h('td', {}, formatDate(t.updated_at)),
        h(
          'td',
          { class: 'row-actions' },
          h('a', { class: 'button small', href: `/studio#template=${t.id}`, 'aria-label': `Edit ${t.name} in the studio` }, 'Edit in studio'),
          h('button', { type: 'button', class: 'button small danger', 'aria-label': `Delete template ${t.name}`, onclick: () => void deleteTemplate(t, usage) }, 'Delete'),
        ),
      ),
    );
    box.replaceChildren(table('Saved templates', ['Name', 'Size', 'Updated', 'Actions'], rows));
  } catch (err) {
    box.replaceChildren(h('p', { class: 'error-text' }, `Templates could not be loaded: ${(err as Error).message}`));
  }
}

async function deleteTemplate(t: TemplateRow, usage: Usage): Promise<void> {
  if (!confirm(`Delete template “${t.name}”?`)) return;
  try {
    await api(`/api/v1/templates/${t.id}`, { method: 'DELETE' });
    await loadTemplates(usage);
    await refresh();
  } catch (err) {
    alert(`Could not delete: ${(err as Error).message}`);
  }
}

function table(caption: string, headings: string[], rows: HTMLElement[]): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap' },
    h('table', {}, h('caption', { class: 'visually-hidden' }, caption), h('thead', {}, h('tr', {}, ...headings.map((x) => h('th', { scope: 'col' }, x)))), h('tbody', {}, ...rows)),
  );
}

// ---- Assets --------------------------------------------------------------------------------

interface AssetRow {
  id: number;
  name: string;
  content_type: string;
  size_bytes: number;
  updated_at: string;
}

const uploadForm = $<HTMLFormElement>('#upload-form');
const fileInput = $<HTMLInputElement>('#asset-file');
const nameInput = $<HTMLInputElement>('#asset-name');
const uploadStatus = $('#upload-status');

async function loadAssets(usage: Usage): Promise<void> {
  const box = $('#assets');
  const paid = usage.limits.max_stored_assets_count !== 0;
  uploadForm.hidden = !paid;
  if (!paid) {
    box.replaceChildren(h('p', { class: 'hint' }, `The asset library comes with paid plans. On the ${usage.user.plan} plan, send images with each compile in the assets field.`));
    return;
  }
  try {
    const res = await api<{ assets: AssetRow[] }>('/api/v1/assets');
    if (res.assets.length === 0) {
      box.replaceChildren(h('p', { class: 'hint' }, 'No assets yet. Upload a logo or a figure to use it in any compile.'));
      return;
    }
    const rows = res.assets.map((a) =>
      h(
        'tr',
        {},
        h('th', { scope: 'row' }, h('code', {}, a.name)),
        h('td', {}, a.content_type),
        h('td', {}, formatBytes(a.size_bytes)),
        h('td', {}, formatDate(a.updated_at)),
        h('td', { class: 'row-actions' }, h('button', { type: 'button', class: 'button small danger', 'aria-label': `Delete asset ${a.name}`, onclick: () => void deleteAsset(a, usage) }, 'Delete')),
      ),
    );
    box.replaceChildren(table('Stored assets', ['Name', 'Type', 'Size', 'Updated', 'Actions'], rows));
  } catch (err) {
    box.replaceChildren(h('p', { class: 'error-text' }, `Assets could not be loaded: ${(err as Error).message}`));
  }
}

async function deleteAsset(a: AssetRow, usage: Usage): Promise<void> {
  if (!confirm(`Delete asset “${a.name}”? Compiles that use it will fail.`)) return;
  try {
    await api(`/api/v1/assets/${a.id}`, { method: 'DELETE' });
    uploadStatus.textContent = `Deleted ${a.name}.`;
    await Promise.all([loadAssets(usage), refresh()]);
  } catch (err) {
    uploadStatus.textContent = `Could not delete ${a.name}: ${(err as Error).message}`;
  }
}

/** A file name made acceptable as an asset name: letters, digits, _ and - plus one extension. */
function assetName(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  const stem = (dot > 0 ? fileName.slice(0, dot) : fileName).replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '') || 'asset';
  const ext = dot > 0 ? fileName.slice(dot + 1).toLowerCase() : '';
  return (ext ? `${stem.slice(0, 63 - ext.length)}.${ext}` : stem).slice(0, 64);
}

fileInput.addEventListener('change', () => {
  const file = fileInput.files?.[0];
  if (file) nameInput.value = assetName(file.name);
});

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

uploadForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const file = fileInput.files?.[0];
  if (!file) {
    uploadStatus.textContent = 'Choose a file to upload.';
    fileInput.focus();
    return;
  }
  const name = nameInput.value.trim() || assetName(file.name);
  const submit = $<HTMLButtonElement>('button[type=submit]', uploadForm);
  submit.disabled = true;
  uploadStatus.textContent = `Uploading ${name}…`;
  try {
    const content_base64 = toBase64(new Uint8Array(await file.arrayBuffer()));
    const res = await api<{ asset: AssetRow; created: boolean }>('/api/v1/assets', { body: { name, content_base64 } });
    uploadStatus.textContent = `${res.created ? 'Uploaded' : 'Replaced'} ${res.asset.name} (${formatBytes(res.asset.size_bytes)}).`;
    uploadForm.reset();
    const usage = await api<Usage>('/api/v1/usage');
    renderUsage(usage);
    await loadAssets(usage);
  } catch (err) {
    uploadStatus.textContent = `Upload failed: ${(err as Error).message}`;
  } finally {
    submit.disabled = false;
  }
});

$('#signout').addEventListener('click', () => {
  forgetKey();
  signedOut();
  $<HTMLInputElement>('#signin-key').focus();
});

// Start signed in when this browser already keeps a key.
if (storedKey()) {
  api<Usage>('/api/v1/usage')
    .then(show)
    .catch((err) => {
      if (err instanceof ApiError && err.status === 401) forgetKey();
      signedOut();
    });
} else {
  signedOut();
}
