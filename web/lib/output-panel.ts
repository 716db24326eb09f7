// The studio's Output panel in the page (markup: src/http/pages/output-panel.ts): reads and
// restores its controls (the `output` object and `on_error`), and disables encryption and the watermark while a PDF standard is
// chosen, because the API refuses those combinations. The signature's identity list comes from
// the account (GET /api/v1/signing-identities, paid plans), handed in by the studio.
import type { Json } from './api';
import { $ } from './dom';
import { buildOutput, DEFAULT_SETTINGS, locksProtection, OutputProblem, PERMISSIONS, settingsFrom, shareableOutput, type OutputSettings } from './output-options';

export interface OutputPanel {
  /** The compile's `output` (undefined when nothing is set); on a problem, marks the control and throws OutputProblem. */
  request(): Json | undefined;
  /** The output a studio link may carry (no encryption). */
  shareable(): Json | undefined;
  restore(output: unknown): void;
  /** Folds the panel away (a compile's result or diagnosis lies under it). */
  close(): void;
  /** The password pdf.js needs to show the PDF this request makes ('' for none). */
  userPassword(): string;
  /** The compile's `on_error`: "continue" asks for a PDF despite recoverable TeX errors. */
  onError(): 'stop' | 'continue';
  /** The account's stored signing identities; null when the key cannot sign (none, or a free plan). */
  setIdentities(names: string[] | null): void;
}

const TEXT_CONTROLS = {
  title: 'out-title',
  author: 'out-author',
  subject: 'out-subject',
  keywords: 'out-keywords',
  lang: 'out-lang',
  userPassword: 'out-user-password',
  ownerPassword: 'out-owner-password',
  watermark: 'out-watermark-text',
  opacity: 'out-watermark-opacity',
  angle: 'out-watermark-angle',
  dpi: 'out-dpi',
  signReason: 'out-sign-reason',
  signLocation: 'out-sign-location',
} as const;
const CHECK_CONTROLS = { pageImage: 'out-page-image', linearize: 'out-linearize', compress: 'out-compress', signTimestamp: 'out-sign-timestamp' } as const;
/** Where a problem with a setting that is not a text box is shown. */
const OTHER_CONTROLS: Partial<Record<keyof OutputSettings, string>> = { signIdentity: 'out-sign-identity' };

export function mountOutputPanel(): OutputPanel {
  const details = $<HTMLDetailsElement>('#output-panel');
  const standard = $<HTMLSelectElement>('#out-standard');
  const identity = $<HTMLSelectElement>('#out-sign-identity');
  const signHint = $('#out-sign-hint');
  const count = $('#output-count');
  const input = (id: string) => $<HTMLInputElement>(`#${id}`);
  const permission = (name: string) => input(`out-perm-${name}`);
  const guarded = [$<HTMLFieldSetElement>('#out-encrypt'), $<HTMLFieldSetElement>('#out-watermark')];
  const goOn = input('out-on-error-continue');
  const onError = () => (goOn.checked ? 'continue' : 'stop');

  function read(): OutputSettings {
    const s: OutputSettings = { ...DEFAULT_SETTINGS, permissions: { ...DEFAULT_SETTINGS.permissions }, standard: standard.value, signIdentity: identity.value };
    for (const [key, id] of Object.entries(TEXT_CONTROLS)) s[key as keyof typeof TEXT_CONTROLS] = input(id).value;
    for (const [key, id] of Object.entries(CHECK_CONTROLS)) s[key as keyof typeof CHECK_CONTROLS] = input(id).checked;
    for (const name of PERMISSIONS) s.permissions[name] = permission(name).checked;
    return s;
  }

  function write(s: OutputSettings): void {
    standard.value = [...standard.options].some((o) => o.value === s.standard) ? s.standard : '';
    for (const [key, id] of Object.entries(TEXT_CONTROLS)) input(id).value = s[key as keyof typeof TEXT_CONTROLS];
    for (const [key, id] of Object.entries(CHECK_CONTROLS)) input(id).checked = s[key as keyof typeof CHECK_CONTROLS];
    for (const name of PERMISSIONS) permission(name).checked = s.permissions[name];
    identity.value = [...identity.options].some((o) => o.value === s.signIdentity) ? s.signIdentity : '';
    sync();
  }

  function setIdentities(names: string[] | null): void {
    const chosen = identity.value;
    identity.replaceChildren(new Option("Don't sign", ''), ...(names ?? []).map((name) => new Option(name, name)));
    identity.value = names?.includes(chosen) ? chosen : '';
    identity.disabled = !names || names.length === 0;
    signHint.textContent =
      names === null
        ? "Needs a paid plan's key and a signing identity stored on the account."
        : names.length === 0
          ? 'No signing identity stored yet: upload a PKCS#12 with POST /api/v1/signing-identities.'
          : 'A PAdES signature with an identity stored on the account; the key never leaves the server.';
    sync();
  }

  /** Applies the standard's exclusions and shows how many options are set. */
  function sync(): void {
    const locked = locksProtection(standard.value);
    for (const group of guarded) {
      group.disabled = locked;
      const hint = $('.hint[data-on]', group);
      hint.textContent = (locked ? hint.dataset.off : hint.dataset.on) ?? '';
    }
    // Cleared, not only disabled: a password must not linger unseen in a locked form.
    if (locked) for (const id of [TEXT_CONTROLS.userPassword, TEXT_CONTROLS.ownerPassword]) input(id).value = '';
    input(TEXT_CONTROLS.dpi).disabled = !input(CHECK_CONTROLS.pageImage).checked;
    for (const id of [TEXT_CONTROLS.signReason, TEXT_CONTROLS.signLocation, CHECK_CONTROLS.signTimestamp]) input(id).disabled = identity.value === '';
    let set = 0;
    try {
      set = Object.keys(buildOutput(read()) ?? {}).length;
    } catch {
      set = 1;
    }
    if (goOn.checked) set++;
    count.textContent = set > 0 ? `· ${set} set` : '';
  }

  details.addEventListener('input', () => {
    for (const el of details.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
    sync();
  });
  details.addEventListener('change', sync);
  function close(): void {
    if (!details.open) return;
    const hadFocus = details.contains(document.activeElement);
    details.open = false;
    if (hadFocus) $('summary', details).focus();
  }
  details.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') close();
  });
  $('#out-reset').addEventListener('click', () => {
    input('out-on-error-stop').checked = true;
    write(settingsFrom(undefined));
  });
  sync();

  return {
    request() {
      try {
        return buildOutput(read());
      } catch (err) {
        const id = err instanceof OutputProblem ? (TEXT_CONTROLS[err.setting as keyof typeof TEXT_CONTROLS] ?? OTHER_CONTROLS[err.setting]) : undefined;
        if (id) {
          const control = $<HTMLElement>(`#${id}`);
          details.open = true;
          control.setAttribute('aria-invalid', 'true');
          control.focus();
        }
        throw err;
      }
    },
    shareable: () => shareableOutput(read()),
    close,
    restore: (output) => write(settingsFrom(output)),
    userPassword: () => (locksProtection(standard.value) ? '' : input(TEXT_CONTROLS.userPassword).value),
    onError,
    setIdentities,
  };
}
