// "Try it" on a gallery template page: POST the edited data, then offer (and open) the PDF.
(function () {
  'use strict';
  var form = document.getElementById('try-form');
  if (!form) return;
  var status = document.getElementById('try-status');
  var link = document.getElementById('try-pdf');
  var button = document.getElementById('try-submit');

  function say(text, kind) {
    status.textContent = text;
    status.className = 'status' + (kind ? ' ' + kind : '');
  }

  function describe(body) {
    var parts = [body.message || body.error || 'The render failed.'];
    if (body.missing_fields && body.missing_fields.length) parts.push('Missing: ' + body.missing_fields.join(', ') + '.');
    if (body.type_errors && body.type_errors.length) {
      parts.push(body.type_errors.map(function (e) { return e.field + ' should be ' + e.expected + ' (got ' + e.got + ')'; }).join('; ') + '.');
    }
    return parts.join(' ');
  }

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    link.hidden = true;
    var data;
    try {
      data = JSON.parse(form.elements.data.value);
    } catch (err) {
      say('The data is not valid JSON: ' + err.message, 'error');
      return;
    }
    button.disabled = true;
    say('Typesetting…');
    fetch(form.getAttribute('data-render-url'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ data: data, color: form.elements.color.value }),
    })
      .then(function (response) {
        return response.json().then(function (body) { return { ok: response.ok, body: body }; });
      })
      .then(function (result) {
        if (!result.ok) {
          say(describe(result.body), 'error');
          return;
        }
        var body = result.body;
        link.href = body.pdf_url;
        link.hidden = false;
        var note = body.pages + (body.pages === 1 ? ' page' : ' pages') + ' in ' + body.compilation_time_ms + ' ms.';
        if (typeof body.remaining_today === 'number') note += ' ' + body.remaining_today + ' free renders left today.';
        say(note, 'ok');
        window.open(body.pdf_url, '_blank', 'noopener');
      })
      .catch(function (err) {
        say('The service could not be reached: ' + err.message, 'error');
      })
      .finally(function () {
        button.disabled = false;
      });
  });
})();
