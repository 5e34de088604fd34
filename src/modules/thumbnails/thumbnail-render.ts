import type { Sharp, SharpOptions } from 'sharp';

/**
 * Turns an image into its thumbnail with sharp (libvips, shipped in the npm package). Whatever
 * the input, it rejects instead of crashing or stalling: a header declaring more than `maxPixels`
 * pixels (a decompression bomb) is refused before any decoding, damaged or truncated pixel data
 * is an error, and the whole work has a time limit.
 */

/** The longest side of a thumbnail, in pixels. */
export const THUMBNAIL_SIZE = 256;
export const THUMBNAIL_TYPE = 'image/webp';

let loaded: Promise<(input: Buffer, options: SharpOptions) => Sharp> | undefined;

/**
 * sharp, loaded on the first thumbnail: mapping libvips adds to the resident memory of a server
 * that may never make one (docs/performance.md, zip archives).
 */
function loadSharp(): Promise<(input: Buffer, options: SharpOptions) => Sharp> {
  loaded ??= import('sharp').then(({ default: sharp }) => {
    // One libvips thread and no operation cache: thumbnails run one at a time in the background,
    // and the cache would keep decoded images in memory between them (the bar: RSS under 300 MB).
    sharp.concurrency(1);
    sharp.cache(false);
    return sharp;
  });
  return loaded;
}

export interface RenderLimits {
  maxPixels: number;
  seconds: number;
}

export interface Rendered {
  data: Buffer;
  width: number;
  height: number;
}

export async function renderThumbnail(input: Buffer, limits: RenderLimits): Promise<Rendered> {
  const sharp = await loadSharp();
  const { data, info } = await sharp(input, { limitInputPixels: limits.maxPixels, sequentialRead: true, failOn: 'error' })
    // Turned as its EXIF orientation says, then shrunk (JPEG shrinks while decoding: little memory).
    .rotate()
    .resize(THUMBNAIL_SIZE, THUMBNAIL_SIZE, { fit: 'inside', withoutEnlargement: true })
    .webp({ quality: 70, effort: 2 })
    .timeout({ seconds: limits.seconds })
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}
