// The header's key control, shared by every page: shows who is signed in and lets the user
// enter or forget a key. The key is checked against /api/v1/usage before it is kept.
import { api, ApiError, forgetKey, storedKey, storeKey, type Usage } from './api';
import { $, h } from './dom';

export interface AccountControl {
  /** Re-renders the header for the current key and (when known) its usage. */
  render(usage: Usage | null): void;
  openDialog(): void;
}

export function mountAccount(onChange: (usage: Usage | null) => void): AccountControl {
  const slot = $('#account');
  const input = h('input', { id: 'key-dialog-input', type: 'password', required: true, autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'key-dialog-error' });
  const remember = h('input', { type: 'checkbox', id: 'key-dialog-remember', checked: true });
  const error = h('p', { id: 'key-dialog-error', class: 'error-text', role: 'alert' });
  const submit = h('button', { type: 'submit', class: 'button primary' }, 'Use key');
  const cancel = h('button', { type: 'button', class: 'button' }, 'Cancel');
  const form = h(
    'form',
    { class: 'stack', novalidate: true },
    h('h2', { id: 'key-dialog-title' }, 'Use an API key'),
    h('p', { class: 'hint' }, 'Compile with your plan instead of the anonymous tier. The key stays in this browser.'),
    h('label', { for: 'key-dialog-input' }, 'API key'),
    input,
    h('label', { class: 'check' }, remember, ' Remember the key in this browser'),
    error,
    h('div', { class: 'actions' }, submit, cancel),
  );
  const dialog = h('dialog', { id: 'key-dialog', 'aria-labelledby': 'key-dialog-title' }, form);
  document.body.append(dialog);
  cancel.addEventListener('click', () => dialog.close());

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const key = input.value.trim();
    if (!key) {
      error.textContent = 'Enter your API key.';
      input.focus();
      return;
    }
    submit.disabled = true;
    error.textContent = '';
    try {
      const usage = await api<Usage>('/api/v1/usage', { key });
      storeKey(key, remember.checked);
      input.value = '';
      dialog.close();
      control.render(usage);
      onChange(usage);
    } catch (err) {
      error.textContent = err instanceof ApiError && err.status === 401 ? 'That key is not valid: it is unknown, revoked or mistyped.' : (err as Error).message;
      input.focus();
    } finally {
      submit.disabled = false;
    }
  });

  const control: AccountControl = {
    render(usage) {
      slot.replaceChildren();
      if (storedKey()) {
        const label = usage ? `${usage.user.email} · ${usage.user.plan}` : 'API key in use';
        const forget = h('button', { type: 'button', class: 'button small' }, 'Forget key');
        forget.addEventListener('click', () => {
          forgetKey();
          control.render(null);
          onChange(null);
        });
        slot.append(h('span', { class: 'who' }, label), forget);
      } else {
        const open = h('button', { type: 'button', class: 'button small' }, 'Use API key');
        open.addEventListener('click', () => control.openDialog());
        slot.append(open);
      }
    },
    openDialog() {
      error.textContent = '';
      dialog.showModal();
      input.focus();
    },
  };
  return control;
}
