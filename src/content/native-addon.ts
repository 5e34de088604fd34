import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ResumableSha256 } from './sha256-midstate.js';

/**
 * Coffre's optional native addon (native/module.c), built by `npm ci`: the `native` crypto engine
 * (native-engine.ts). The `node` engine does the same work with node:crypto and node:fs.
 */
export interface NativeAddon {
  /** AES-256-GCM (native/aes-gcm.c; see native-engine.ts). */
  context(key: Buffer): object;
  seal(context: object, nonce: Buffer, aad: Buffer, input: Buffer | Buffer[], out: Buffer, at: number): number;
  open(context: object, nonce: Buffer, aad: Buffer, input: Buffer, out: Buffer, at: number): number;
  /** Durable files, one threadpool job each (native/durable-files.c; see src/blobs/fs/durable-files.ts). */
  writeFileDurably(path: string, chunks: Uint8Array[], renameTo?: string): Promise<void>;
  syncDirectory(path: string): Promise<void>;
  /** A run of a blob file's sealed segments read and opened as one threadpool job (native/read-open.c; see file-decrypt-stream.ts). */
  readOpen(
    fd: number,
    position: number,
    storedBytes: number,
    key: Buffer,
    header: Buffer,
    firstIndex: number,
    finalIndex: number,
    staging: Buffer,
    out: Buffer,
  ): Promise<number>;
  /** A small blob file opened, read, opened (decrypted) and closed as one threadpool job (native/read-open.c; see native-engine.ts). */
  readWhole(path: string, plainSize: number, key: Buffer, staging: Buffer, out: Buffer): Promise<number>;
  /** readWhole's opening of a whole stored stream already in memory, on the calling thread (native/read-open.c). */
  openWhole(stored: Buffer, plainSize: number, key: Buffer, out: Buffer): number;
  /** A run of segments sealed and written into a blob file as one threadpool job, and SHA-256 on the threadpool (native/seal-write.c; see file-encrypt-stream.ts). */
  sealWrite(
    fd: number,
    position: number,
    key: Buffer,
    header: Buffer,
    firstIndex: number,
    final: boolean,
    chunks: Uint8Array[],
    withHeader: boolean,
  ): Promise<number>;
  detachBuffers(buffers: ArrayBuffer[]): number;
  sha256(midstate?: Buffer): object;
  sha256Update(context: object, chunks: Uint8Array[]): Promise<void>;
  sha256Digest(context: object): Buffer;
  sha256Midstate(context: object): Buffer;
}

/** The addon's SHA-256 as the content core uses it: each update is a threadpool job. */
export function addonSha256(addon: NativeAddon, midstate?: Buffer): ResumableSha256 {
  const context = addon.sha256(midstate);
  return {
    update: (chunks) => addon.sha256Update(context, chunks),
    midstate: () => addon.sha256Midstate(context),
    digest: () => addon.sha256Digest(context),
  };
}

/** Where scripts/build-native.mjs leaves the build, seen from src/content or dist/src/content; null when it is absent. */
function nativeBuildPath(): string | null {
  for (const relative of ['../../native/build/Release/coffre_native.node', '../../../native/build/Release/coffre_native.node']) {
    const file = new URL(relative, import.meta.url).pathname;
    if (existsSync(file)) return file;
  }
  return null;
}

let loaded: NativeAddon | null | undefined;

/** The addon, loaded on first use; null when it was not built. */
export function loadNativeAddon(): NativeAddon | null {
  if (loaded === undefined) {
    const file = nativeBuildPath();
    loaded = file ? (createRequire(import.meta.url)(file) as NativeAddon) : null;
  }
  return loaded;
}
