// Sign-up: create a Free account for an email address and show its key once.
import { api, ApiError, storeKey, type Usage } from './lib/api';
import { mountAccount } from './lib/account';
import { $ } from './lib/dom';

const account = mountAccount(() => undefined);
account.render(null);

if (document.body.dataset.signup === 'open') {
  const form = $<HTMLFormElement>('#signup-form');
  const email = $<HTMLInputElement>('#email');
  const error = $('#email-error');
  const result = $('#signup-result');
  const submit = $<HTMLButtonElement>('button[type=submit]', form);

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    email.removeAttribute('aria-invalid');
    const value = email.value.trim();
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value)) {
      fail('Enter an email address such as you@example.com.');
      return;
    }
    submit.disabled = true;
    try {
      const res = await api<{ api_key: string; account: { email: string } }>('/api/v1/signup', { body: { email: value }, key: null });
      storeKey(res.api_key);
      $('#new-key').textContent = res.api_key;
      form.hidden = true;
      result.hidden = false;
      result.focus();
      account.render(await api<Usage>('/api/v1/usage').catch(() => null));
    } catch (err) {
      const code = err instanceof ApiError ? err.code : '';
      fail(
        code === 'email_taken'
          ? 'An account with this address exists already. Sign in on the dashboard with its key.'
          : (err as Error).message,
      );
    } finally {
      submit.disabled = false;
    }
  });

  function fail(message: string): void {
    error.textContent = message;
    email.setAttribute('aria-invalid', 'true');
    email.focus();
  }

  $('#copy-key').addEventListener('click', async () => {
    const key = $('#new-key').textContent ?? '';
    let copied = false;
    try {
      await navigator.clipboard.writeText(key);
      copied = true;
    } catch {
      const selection = getSelection();
      selection?.selectAllChildren($('#new-key'));
    }
    $('#copy-status').textContent = copied ? 'Key copied to the clipboard.' : 'Key selected: press Ctrl+C (Cmd+C) to copy it.';
  });
}
