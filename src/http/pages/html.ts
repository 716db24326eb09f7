// The smallest safe HTML kit for server-rendered pages: every interpolated value goes
// through `h`, and pages are assembled from strings that are already escaped.
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML element content and quoted attribute values. */
export function h(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/**
 * A tiny Markdown subset for trusted instructions: headings, bullet lists, paragraphs and
 * `code` spans. The text is escaped first, so nothing in it can become markup.
 */
export function miniMarkdown(source: string): string {
  const inline = (text: string) => h(text).replace(/`([^`]+)`/g, '<code>$1</code>');
  const out: string[] = [];
  let list: string[] | null = null;
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length) out.push(`<p>${inline(paragraph.join(' '))}</p>`);
    paragraph = [];
    if (list) out.push(`<ul>${list.map((item) => `<li>${inline(item)}</li>`).join('')}</ul>`);
    list = null;
  };
  for (const raw of source.split('\n')) {
    const line = raw.trimEnd();
    const heading = /^(#{1,3})\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      const level = Math.min(heading[1]!.length + 2, 4);
      out.push(`<h${level}>${inline(heading[2]!)}</h${level}>`);
    } else if (/^[-*]\s+/.test(line)) {
      if (paragraph.length) flush();
      (list ??= []).push(line.replace(/^[-*]\s+/, ''));
    } else if (line.trim() === '') {
      flush();
    } else if (list && /^\s+/.test(raw)) {
      list[list.length - 1] += ` ${line.trim()}`;
    } else {
      if (list) flush();
      paragraph.push(line.trim());
    }
  }
  flush();
  return out.join('\n');
}

export function layout(options: { title: string; description: string; body: string; canonical: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${h(options.title)}</title>
<meta name="description" content="${h(options.description)}">
<link rel="canonical" href="${h(options.canonical)}">
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/gallery/static/gallery.css">
</head>
<body>
<header class="masthead"><div class="wrap"><a class="brand" href="/gallery">Quire</a><nav><a href="/gallery">Gallery</a><a href="/docs">API reference</a></nav></div></header>
<main class="wrap">
${options.body}
</main>
<footer class="colophon"><div class="wrap">Every document is typeset with LaTeX by Quire. Render any template without an account; an API key lifts the daily limit.</div></footer>
</body>
</html>
`;
}
