/**
 * The content core: everything the rest of the service may use of stored content. Modules import
 * this file only (an import rule, .dependency-cruiser.cjs, checks it); formats, codecs, engines
 * and the native addon are the core's own.
 */
export { createContentStore, INLINE_BLOB_LIMIT } from './content-store.js';
export type {
  ContentStore,
  KeyWrap,
  OpenedContent,
  OpenOptions,
  SealedContent,
  SealedVersion,
  StoredContent,
  StoreOptions,
  UploadLimits,
  VersionContent,
} from './content-store.js';
export type { AppendLimits, Appended, ResumableContent } from './resumable.js';
export { chooseEngine } from './choose-engine.js';
export { WHOLE_READ_LIMIT } from './engine.js';
export type { CryptoEngine, CryptoEngineName } from './engine.js';
export type { CryptoEngineChoice } from '../config.js';
export { CipherFormatError } from './format.js';
