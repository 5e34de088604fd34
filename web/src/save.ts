/**
 * Saving downloaded bytes: a File System Access stream when the browser has one and the file is
 * large, or is a zip (memory stays bounded: each chunk goes to disk), else a Blob and a download link.
 */

const STREAM_TO_DISK_FROM = 32 * 1024 * 1024;

export interface Sink {
  write(chunk: Uint8Array): Promise<void>;
  close(): Promise<void>;
  abort(): Promise<void>;
}

/**
 * Opens where the bytes go. Call it first thing in a click handler: the save dialog needs the
 * user's gesture. Resolves to null when the user cancels the dialog. `toDisk` asks for the save
 * dialog whatever the size: a zip's size is not known before its request, and may be large.
 */
export async function openSink(name: string, size: number, toDisk = false): Promise<Sink | null> {
  const picker = (window as unknown as { showSaveFilePicker?: (o: object) => Promise<any> }).showSaveFilePicker;
  if (picker && (toDisk || size >= STREAM_TO_DISK_FROM)) {
    let handle: any;
    try {
      handle = await picker({ suggestedName: name });
    } catch (error) {
      if ((error as Error).name === 'AbortError') return null;
      throw error;
    }
    const writable = await handle.createWritable();
    return {
      write: (chunk) => writable.write(chunk),
      close: () => writable.close(),
      abort: () => writable.abort(),
    };
  }
  const parts: BlobPart[] = [];
  return {
    write: async (chunk) => {
      parts.push(chunk as Uint8Array<ArrayBuffer>);
    },
    close: async () => saveBlob(new Blob(parts), name),
    abort: async () => {
      parts.length = 0;
    },
  };
}

export function saveBlob(blob: Blob, name: string): void {
  const href = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = href;
  a.download = name;
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 60_000);
}
