import { TEXT_PREVIEW_BYTES, previewTypeOf } from '../../src/modules/files/preview-types';

/**
 * Which files the web app previews, and how: the server's own allow-list
 * (src/modules/files/preview-types.ts, a module without imports), chosen by the file's name. Text
 * covers code, HTML and XML: they are shown as text, never rendered.
 */
export type PreviewKind = 'image' | 'pdf' | 'text' | 'audio' | 'video';

/** A text preview shows at most this many bytes, as the server sends. */
export { TEXT_PREVIEW_BYTES };

/** The type a file is previewed as, or null when it is not previewed. */
export function previewType(name: string): string | null {
  return previewTypeOf(name) ?? null;
}

export function previewKind(name: string): PreviewKind | null {
  const type = previewType(name);
  if (!type) return null;
  if (type === 'application/pdf') return 'pdf';
  return type.slice(0, type.indexOf('/')) as PreviewKind;
}
