/**
 * Which files the web app previews, and how: the same allow-list as the server's
 * (src/modules/files/preview-types.ts), chosen by the file's name. Text covers code, HTML and XML:
 * they are shown as text, never rendered.
 */
export type PreviewKind = 'image' | 'pdf' | 'text' | 'audio' | 'video';

const TYPES: Record<string, string> = {
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

const TEXT = new Set(
  (
    'txt text md markdown csv tsv log ini cfg conf toml yaml yml json xml html htm xhtml css scss less js mjs cjs ts tsx jsx ' +
    'py rb go rs java kt c h cc cpp hpp cs php pl sh bash zsh fish ps1 sql swift lua r scala hs ex exs erl clj vue svelte ' +
    'tex rst adoc diff patch env gitignore dockerfile makefile'
  ).split(' '),
);

/** A text preview shows at most this many bytes, as the server sends. */
export const TEXT_PREVIEW_BYTES = 1024 * 1024;

function extensionOf(name: string): string {
  const lower = name.toLowerCase();
  return lower.slice(lower.lastIndexOf('.') + 1);
}

/** The type a file is previewed as, or null when it is not previewed. */
export function previewType(name: string): string | null {
  const extension = extensionOf(name);
  return TYPES[extension] ?? (TEXT.has(extension) ? 'text/plain' : null);
}

export function previewKind(name: string): PreviewKind | null {
  const type = previewType(name);
  if (!type) return null;
  if (type === 'application/pdf') return 'pdf';
  return type.slice(0, type.indexOf('/')) as PreviewKind;
}
