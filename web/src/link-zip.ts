/**
 * "Download all" on a folder link's page: the zip is made in the page (client-zip, stored entries,
 * zip64 when needed) from each file's sealed download decrypted here, so the link key never leaves
 * the browser (the server's own zip route for links would need it in the request). The files are
 * fetched one after the other, each streamed into the archive as it decrypts: memory holds a few
 * segments, not the folder.
 */
import { makeZip } from 'client-zip';
import { downloadThroughLink } from './link-download';

/** A file of a folder link's listing (`POST /folders/shared/{hash}`). */
export interface SharedFile {
  hashName: string;
  name: string;
  /** The folder inside the shared one, `/` for its own files, else `/a/b`. */
  path: string;
  size: number;
  createdAt: string;
}

export interface LinkZip {
  sharedHash: string;
  linkKey: string;
  password?: string;
  folderName: string;
  files: SharedFile[];
  /** Where the archive's bytes go, in order (awaited: a slow disk slows the downloads). */
  write: (chunk: Uint8Array) => Promise<void>;
  /** Percent of the files' bytes in the archive so far. */
  onProgress?: (percent: number) => void;
  onRetry?: (seconds: number | null) => void;
}

/** A name segment that could climb out of the folder when extracted is made harmless, as the server's zips do. */
function safeSegment(segment: string): string {
  const replaced = segment.replace(/[/\\\0]/g, '_');
  return replaced === '' || replaced === '.' || replaced === '..' ? replaced.replace(/\./g, '_') || '_' : replaced;
}

/** The entry's name: the shared folder, the file's folders inside it, then the file. */
export function entryName(folderName: string, file: SharedFile): string {
  const folders = file.path.split('/').filter(Boolean);
  return [folderName, ...folders, file.name].map(safeSegment).join('/');
}

/**
 * Writes the archive of `files` to `z.write`. The first failure (a download, a wrong key, a damaged
 * segment, the sink) stops it and is thrown as it was, so the page can say what went wrong.
 */
export async function downloadLinkZip(z: LinkZip): Promise<void> {
  const total = z.files.reduce((sum, f) => sum + f.size, 0);
  let done = 0;
  let failure: unknown = undefined;
  const progress = () => z.onProgress?.(total > 0 ? Math.min(100, Math.floor((done / total) * 100)) : 0);

  /** One file's plaintext as a stream; its download starts when client-zip reaches it. */
  const plaintextOf = (file: SharedFile): ReadableStream<Uint8Array> => {
    const pipe = new TransformStream<Uint8Array, Uint8Array>();
    const writer = pipe.writable.getWriter();
    downloadThroughLink({
      sharedHash: z.sharedHash,
      linkKey: z.linkKey,
      password: z.password,
      hashName: file.hashName,
      write: async (chunk) => {
        await writer.ready;
        await writer.write(chunk);
        done += chunk.length;
        progress();
      },
      onRetry: z.onRetry,
    })
      .then(
        () => writer.close(),
        (error: unknown) => {
          failure ??= error;
          return writer.abort(error);
        },
      )
      // The archive was given up (a failure elsewhere): this stream has no reader left to tell.
      .catch(() => {});
    return pipe.readable;
  };

  async function* entries() {
    for (const file of z.files) {
      yield { name: entryName(z.folderName, file), lastModified: new Date(file.createdAt), input: plaintextOf(file) };
    }
  }

  const reader = makeZip(entries()).getReader();
  try {
    for (;;) {
      const { done: end, value } = await reader.read();
      if (end) break;
      await z.write(value);
    }
  } catch (error) {
    await reader.cancel().catch(() => {});
    throw failure ?? error;
  }
  progress();
}
