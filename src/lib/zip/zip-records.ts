/**
 * The records of a zip archive whose entries are stored (not compressed) with their sizes and
 * CRC-32 known before their bytes are written: no data descriptors, so that every record's offset
 * is known before the first byte and any byte range of the archive can be produced on its own
 * (zip-archive.ts). PKWARE's APPNOTE 6.3.10: local file header (4.3.7), central directory header
 * (4.3.12), zip64 extra field (4.5.3), zip64 end of central directory record and locator (4.3.14,
 * 4.3.15), end of central directory record (4.3.16); the extended timestamp extra field ("UT",
 * 0x5455) is Info-ZIP's.
 */

/** The most a classic 4-byte field holds; a value at or past it goes into the zip64 extra field. */
export const MAX_32 = 0xffffffff;
/** The most entries a classic end record counts. */
export const MAX_16 = 0xffff;

const LOCAL_HEADER = 0x04034b50;
const CENTRAL_HEADER = 0x02014b50;
const ZIP64_END = 0x06064b50;
const ZIP64_LOCATOR = 0x07064b50;
const END = 0x06054b50;

/** Bit 11 of the general purpose flags: the name is UTF-8. */
const UTF8_FLAG = 0x0800;
/** 4.5 needed to read zip64 fields, 2.0 for folders and stored files otherwise. */
const VERSION_ZIP64 = 45;
const VERSION_DEFAULT = 20;
/** Made by Unix (3), spec 4.5: the external attributes hold Unix modes. */
const MADE_BY = (3 << 8) | VERSION_ZIP64;
const FILE_MODE = 0o100644;
const FOLDER_MODE = 0o040755;
/** MS-DOS's directory attribute, set beside the Unix mode for extractors that read only it. */
const DOS_DIRECTORY = 0x10;

export interface ZipEntry {
  /** The path in the archive, UTF-8 bytes: relative, `/`-separated, a folder's ending with `/`. */
  name: Buffer;
  /** Bytes of content (0 for a folder). */
  size: number;
  /** CRC-32 of the content (0 for a folder and an empty file). */
  crc32: number;
  modifiedAt: Date;
}

const isFolder = (entry: ZipEntry) => entry.name[entry.name.length - 1] === 0x2f;

/** Whether an entry's sizes need the zip64 extra field (then in both of its headers). */
const bigSize = (entry: ZipEntry) => entry.size >= MAX_32;

/** Length of the local header of `entry`, with its name and extra fields. */
export function localHeaderLength(entry: ZipEntry): number {
  return 30 + entry.name.length + 9 + (bigSize(entry) ? 20 : 0);
}

/** Length of the central directory header of `entry`, placed at `offset`. */
export function centralHeaderLength(entry: ZipEntry, offset: number): number {
  const zip64 = zip64CentralFields(entry, offset).length;
  return 46 + entry.name.length + 9 + (zip64 > 0 ? 4 + 8 * zip64 : 0);
}

export function localHeader(entry: ZipEntry): Buffer {
  const out = Buffer.allocUnsafe(localHeaderLength(entry)).fill(0);
  out.writeUInt32LE(LOCAL_HEADER, 0);
  out.writeUInt16LE(bigSize(entry) ? VERSION_ZIP64 : VERSION_DEFAULT, 4);
  out.writeUInt16LE(UTF8_FLAG, 6);
  out.writeUInt16LE(0, 8); // stored
  writeSharedFields(out, 10, entry, out.length - 30 - entry.name.length);
  let at = 30 + entry.name.copy(out, 30);
  at = writeTimestamp(out, at, entry.modifiedAt);
  if (bigSize(entry)) writeZip64Extra(out, at, [entry.size, entry.size]);
  return out;
}

export function centralHeader(entry: ZipEntry, offset: number): Buffer {
  const out = Buffer.allocUnsafe(centralHeaderLength(entry, offset));
  writeCentralHeader(out, 0, entry, offset);
  return out;
}

/** Writes the central directory header of `entry` (placed at `offset`) into `out` at `at`; where it ends. */
export function writeCentralHeader(out: Buffer, at: number, entry: ZipEntry, offset: number): number {
  const zip64 = zip64CentralFields(entry, offset);
  const end = at + centralHeaderLength(entry, offset);
  out.fill(0, at, end);
  out.writeUInt32LE(CENTRAL_HEADER, at);
  out.writeUInt16LE(MADE_BY, at + 4);
  out.writeUInt16LE(zip64.length > 0 ? VERSION_ZIP64 : VERSION_DEFAULT, at + 6);
  out.writeUInt16LE(UTF8_FLAG, at + 8);
  out.writeUInt16LE(0, at + 10);
  writeSharedFields(out, at + 12, entry, end - at - 46 - entry.name.length);
  // Comment length, disk number start, internal attributes: 0 (offsets 32, 34, 36).
  const external = isFolder(entry) ? ((FOLDER_MODE << 16) | DOS_DIRECTORY) >>> 0 : (FILE_MODE << 16) >>> 0;
  out.writeUInt32LE(external, at + 38);
  out.writeUInt32LE(offset >= MAX_32 ? MAX_32 : offset, at + 42);
  let next = at + 46 + entry.name.copy(out, at + 46);
  next = writeTimestamp(out, next, entry.modifiedAt);
  if (zip64.length > 0) writeZip64Extra(out, next, zip64);
  return end;
}

/** The central directory header's zip64 fields, in the spec's order: sizes when big, then the offset when past 4 GiB. */
function zip64CentralFields(entry: ZipEntry, offset: number): number[] {
  return [...(bigSize(entry) ? [entry.size, entry.size] : []), ...(offset >= MAX_32 ? [offset] : [])];
}

/** The archive's end: the zip64 end record and locator when a count or offset needs them, then the classic end record. */
export function endRecords(entries: number, directoryOffset: number, directoryLength: number): Buffer {
  const zip64 = entries > MAX_16 || directoryOffset >= MAX_32 || directoryLength >= MAX_32;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(END, 0);
  end.writeUInt16LE(Math.min(entries, MAX_16), 8);
  end.writeUInt16LE(Math.min(entries, MAX_16), 10);
  end.writeUInt32LE(Math.min(directoryLength, MAX_32), 12);
  end.writeUInt32LE(Math.min(directoryOffset, MAX_32), 16);
  if (!zip64) return end;
  const record = Buffer.alloc(56 + 20);
  record.writeUInt32LE(ZIP64_END, 0);
  record.writeBigUInt64LE(44n, 4);
  record.writeUInt16LE(MADE_BY, 12);
  record.writeUInt16LE(VERSION_ZIP64, 14);
  record.writeBigUInt64LE(BigInt(entries), 24);
  record.writeBigUInt64LE(BigInt(entries), 32);
  record.writeBigUInt64LE(BigInt(directoryLength), 40);
  record.writeBigUInt64LE(BigInt(directoryOffset), 48);
  record.writeUInt32LE(ZIP64_LOCATOR, 56);
  record.writeBigUInt64LE(BigInt(directoryOffset + directoryLength), 64);
  record.writeUInt32LE(1, 72);
  return Buffer.concat([record, end]);
}

/** Length of endRecords' output. */
export function endRecordsLength(entries: number, directoryOffset: number, directoryLength: number): number {
  return entries > MAX_16 || directoryOffset >= MAX_32 || directoryLength >= MAX_32 ? 98 : 22;
}

/** The fields both headers have in the same order: time and date, CRC-32, both sizes, the name's and the extra field's lengths. */
function writeSharedFields(out: Buffer, at: number, entry: ZipEntry, extraLength: number): void {
  writeDosTime(out, at, entry.modifiedAt);
  out.writeUInt32LE(entry.crc32 >>> 0, at + 4);
  const size32 = bigSize(entry) ? MAX_32 : entry.size;
  out.writeUInt32LE(size32, at + 8);
  out.writeUInt32LE(size32, at + 12);
  out.writeUInt16LE(entry.name.length, at + 16);
  out.writeUInt16LE(extraLength, at + 18);
}

function writeZip64Extra(out: Buffer, at: number, fields: number[]): void {
  out.writeUInt16LE(0x0001, at);
  out.writeUInt16LE(fields.length * 8, at + 2);
  fields.forEach((value, i) => out.writeBigUInt64LE(BigInt(value), at + 4 + 8 * i));
}

/** The extended timestamp (modification time only, UTC seconds): 9 bytes. */
function writeTimestamp(out: Buffer, at: number, date: Date): number {
  out.writeUInt16LE(0x5455, at);
  out.writeUInt16LE(5, at + 2);
  out.writeUInt8(1, at + 4);
  out.writeUInt32LE(Math.max(0, Math.min(MAX_32, Math.floor(date.getTime() / 1000))), at + 5);
  return at + 9;
}

/** MS-DOS time and date (2 s resolution, years 1980–2107), in UTC: the extended timestamp is exact. */
function writeDosTime(out: Buffer, at: number, date: Date): void {
  const year = Math.min(2107, Math.max(1980, date.getUTCFullYear()));
  const clamped = year !== date.getUTCFullYear();
  const time = clamped ? 0 : (date.getUTCHours() << 11) | (date.getUTCMinutes() << 5) | (date.getUTCSeconds() >> 1);
  const day = clamped ? (1 << 5) | 1 : ((date.getUTCMonth() + 1) << 5) | date.getUTCDate();
  out.writeUInt16LE(time, at);
  out.writeUInt16LE(((year - 1980) << 9) | day, at + 2);
}
