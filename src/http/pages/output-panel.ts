// The studio's "Output" panel (issue 23): a <details> of form controls for the compile's
// `output` object, and its `on_error` (issue 39). Limits come from the schema itself so the page and the API cannot drift;
// web/lib/output-panel.ts reads the controls. Attachments, stamp assets and a PKCS#12 sent with the
// request stay API-only: the studio signs with an identity stored on the account (issue 40).
import { DPI_MAX, DPI_MIN, METADATA_MAX, PASSWORD_MAX_BYTES, WATERMARK_MAX } from '../../compile/output-schema.js';
import { SIGN_TEXT_MAX } from '../../signing/schema.js';

/** The standards the studio offers; the API also takes a-2u, a-3u, a-4, a-4f, combinations and `tagged`. */
const STANDARDS: Array<[string, string]> = [
  ['', 'None'],
  ['a-1b', 'PDF/A-1b'],
  ['a-2b', 'PDF/A-2b'],
  ['a-3b', 'PDF/A-3b'],
  // Issue 40: tagged, accessible PDF (needs the language below, and lualatex or pdflatex).
  ['ua-1', 'PDF/UA-1 (tagged)'],
  ['ua-2', 'PDF/UA-2 (tagged)'],
  ['tagged', 'Tagged PDF (no PDF/UA claim)'],
];

const PERMISSIONS: Array<[string, string]> = [
  ['print', 'Print'],
  ['modify', 'Change'],
  ['copy', 'Copy text'],
  ['annotate', 'Comment'],
  ['fill_forms', 'Fill forms'],
  ['accessibility', 'Screen readers'],
];

const text = (id: string, label: string, extra = '') =>
  `<label for="${id}">${label}</label><input id="${id}" maxlength="${METADATA_MAX}" autocomplete="off"${extra}>`;

/** A hint whose text the script swaps for `off` while a PDF standard disables its group. */
const hint = (id: string, on: string, off: string) => `<p id="${id}" class="hint" data-on="${on}" data-off="${off}">${on}</p>`;

export function outputPanel(): string {
  const standards = STANDARDS.map(([value, label]) => `<option value="${value}">${label}</option>`).join('');
  const permissions = PERMISSIONS.map(
    ([name, label]) => `<label class="check"><input type="checkbox" id="out-perm-${name}" checked> ${label}</label>`,
  ).join('');
  const password = (id: string, label: string) =>
    `<label for="${id}">${label}</label><input id="${id}" type="password" autocomplete="new-password" spellcheck="false" maxlength="${PASSWORD_MAX_BYTES}">`;
  return `<details id="output-panel" class="output-panel">
  <summary class="button">Output<span id="output-count" class="output-count"></span></summary>
  <div class="output-body">
    <div class="output-col">
      <fieldset class="output-group">
        <legend>PDF standard</legend>
        <label for="out-standard" class="visually-hidden">PDF standard</label>
        <select id="out-standard" aria-describedby="out-standard-hint">${standards}</select>
        <p id="out-standard-hint" class="hint">PDF/A for archiving: fonts embedded, checked after TeX. PDF/UA: a tagged, accessible PDF (set the language and title; lualatex or pdflatex), with a report of the checks. Neither with encryption or a watermark; a tagged PDF without the PDF/UA claim takes both.</p>
      </fieldset>
      <fieldset class="output-group">
        <legend>Delivery</legend>
        <label class="check"><input type="checkbox" id="out-page-image"> Return an image of page 1</label>
        <label for="out-dpi">Image resolution (dpi)</label>
        <input id="out-dpi" type="number" min="${DPI_MIN}" max="${DPI_MAX}" step="1" value="${DPI_MIN}">
        <label class="check"><input type="checkbox" id="out-linearize"> Linearize (fast web view)</label>
        <label class="check"><input type="checkbox" id="out-compress"> Compress</label>
      </fieldset>
      <fieldset class="output-group" aria-describedby="out-on-error-hint">
        <legend>On error</legend>
        <label class="check"><input type="radio" name="out-on-error" id="out-on-error-stop" value="stop" checked> Stop</label>
        <label class="check"><input type="radio" name="out-on-error" id="out-on-error-continue" value="continue"> Continue</label>
        <p id="out-on-error-hint" class="hint">Continue: TeX goes on past errors it can recover from; the PDF comes with them listed.</p>
      </fieldset>
    </div>
    <fieldset class="output-group">
      <legend>Document properties</legend>
      ${text('out-title', 'Title')}
      ${text('out-author', 'Author')}
      ${text('out-subject', 'Subject')}
      ${text('out-keywords', 'Keywords', ' aria-describedby="out-keywords-hint"')}
      <p id="out-keywords-hint" class="hint">Separate them with commas.</p>
      <label for="out-lang">Language</label>
      <input id="out-lang" maxlength="35" autocomplete="off" spellcheck="false" placeholder="en-GB" aria-describedby="out-lang-hint">
      <p id="out-lang-hint" class="hint">A language tag, e.g. en-GB or de.</p>
    </fieldset>
    <div class="output-col">
      <fieldset class="output-group" id="out-encrypt" aria-describedby="out-encrypt-hint">
        <legend>Encryption</legend>
        ${hint('out-encrypt-hint', 'AES-256. The passwords go only into the compile: the studio never keeps them.', 'PDF/A forbids encryption: set the PDF standard to None to encrypt.')}
        ${password('out-user-password', 'Password to open (optional)')}
        ${password('out-owner-password', 'Owner password')}
        <p class="hint">Allowed without the owner password:</p>
        <div class="perm-grid">${permissions}</div>
      </fieldset>
      <fieldset class="output-group" id="out-watermark" aria-describedby="out-watermark-hint">
        <legend>Watermark</legend>
        ${hint('out-watermark-hint', 'Text stamped over every page.', 'PDF/A cannot check a watermark: set the PDF standard to None to stamp one.')}
        <label for="out-watermark-text">Text</label>
        <input id="out-watermark-text" maxlength="${WATERMARK_MAX}" autocomplete="off">
        <div class="output-pair">
          <div><label for="out-watermark-opacity">Opacity</label><input id="out-watermark-opacity" type="number" min="0" max="1" step="0.05" value="0.2"></div>
          <div><label for="out-watermark-angle">Angle (°)</label><input id="out-watermark-angle" type="number" min="-360" max="360" step="1" value="45"></div>
        </div>
      </fieldset>
      <fieldset class="output-group" id="out-sign" aria-describedby="out-sign-hint">
        <legend>Signature</legend>
        <p id="out-sign-hint" class="hint">Needs a paid plan's key and a signing identity stored on the account.</p>
        <label for="out-sign-identity">Signing identity</label>
        <select id="out-sign-identity" disabled><option value="">Don't sign</option></select>
        <label for="out-sign-reason">Reason</label>
        <input id="out-sign-reason" maxlength="${SIGN_TEXT_MAX}" autocomplete="off">
        <label for="out-sign-location">Location</label>
        <input id="out-sign-location" maxlength="${SIGN_TEXT_MAX}" autocomplete="off">
        <label class="check"><input type="checkbox" id="out-sign-timestamp"> Timestamp from the server's authority (PAdES B-T)</label>
      </fieldset>
    </div>
    <div class="output-foot"><button type="button" id="out-reset" class="button small">Reset output options</button></div>
  </div>
</details>`;
}
