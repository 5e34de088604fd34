/**
 * The content types a preview is served as: an allow-list chosen by the file's name, never the
 * type its uploader gave, so that nothing is ever served as HTML (or anything a browser would run)
 * from the app's origin. HTML, XML and code are served as plain text; SVG only as an image (the web
 * app shows it in an `<img>`, where its scripts do not run, and the sandboxing CSP still applies).
 * The web app's bundle imports this module too (web/src/preview-kinds.ts): it stays without imports.
 */
const BY_EXTENSION: Record<string, string> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  svg: 'image/svg+xml',
  pdf: 'application/pdf',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  oga: 'audio/ogg',
  opus: 'audio/ogg',
  flac: 'audio/flac',
  m4a: 'audio/mp4',
  mp4: 'video/mp4',
  m4v: 'video/mp4',
  webm: 'video/webm',
  ogv: 'video/ogg',
};

/** Text and code: shown as text, whatever their language (HTML included: never rendered). */
const TEXT_EXTENSIONS = new Set(
  (
    'txt text md markdown csv tsv log ini cfg conf toml yaml yml json xml html htm xhtml css scss less js mjs cjs ts tsx jsx ' +
    'py rb go rs java kt c h cc cpp hpp cs php pl sh bash zsh fish ps1 sql swift lua r scala hs ex exs erl clj vue svelte ' +
    'tex rst adoc diff patch env gitignore dockerfile makefile'
  ).split(' '),
);

/** A text preview shows at most this many bytes (the start of the file). */
export const TEXT_PREVIEW_BYTES = 1024 * 1024;

export const TEXT_PLAIN = 'text/plain; charset=utf-8';

/** The type to serve `name` as for a preview, or undefined when it is not previewed. */
export function previewTypeOf(name: string): string | undefined {
  const lower = name.toLowerCase();
  const dot = lower.lastIndexOf('.');
  const extension = dot >= 0 ? lower.slice(dot + 1) : lower;
  if (BY_EXTENSION[extension]) return BY_EXTENSION[extension];
  return TEXT_EXTENSIONS.has(extension) ? TEXT_PLAIN : undefined;
}
