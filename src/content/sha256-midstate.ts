/**
 * SHA-256 whose state can be kept between requests: a resumable upload hashes its segments as
 * they arrive, and another request, maybe on another instance, carries on from the state saved.
 * node:crypto's hashes cannot export their state, so the `node` engine (the portable fallback)
 * computes it here, in JavaScript; the `native` engine does the same in the addon (OpenSSL's
 * low-level context). Both save the same midstate, so either continues the other's.
 *
 * Midstate: 40 bytes, the words H0..H7 then the count of bytes hashed (uint64), big-endian, taken
 * only at a 64-byte boundary.
 */
export const MIDSTATE_BYTES = 40;

/** A SHA-256 in progress, as the content core uses it (the engines give one: see engine.ts). */
export interface ResumableSha256 {
  /** Hashes the chunks, in order; one update at a time. */
  update(chunks: Buffer[]): Promise<void>;
  /** The state after the bytes hashed so far; RangeError unless they are a multiple of 64. */
  midstate(): Buffer;
  /** The digest; the hash is then spent. */
  digest(): Buffer;
}

// Int32Arrays: V8 keeps their values small integers, where uint32 values past 2^31 would be doubles.
const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be,
  0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
  0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85,
  0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
  0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
  0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const INITIAL = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/** FIPS 180-4 SHA-256 in JavaScript, from the start or from a midstate. */
export class JsSha256 implements ResumableSha256 {
  private readonly h = new Int32Array(INITIAL);
  private readonly w = new Int32Array(64);
  private readonly block = Buffer.alloc(64);
  private blockLength = 0;
  private bytes = 0;

  constructor(midstate?: Buffer) {
    if (!midstate) return;
    if (midstate.length !== MIDSTATE_BYTES) throw new RangeError('a SHA-256 midstate is 40 bytes');
    for (let i = 0; i < 8; i++) this.h[i] = midstate.readInt32BE(4 * i);
    this.bytes = midstate.readUInt32BE(32) * 2 ** 32 + midstate.readUInt32BE(36);
    if (this.bytes % 64 !== 0) throw new RangeError('a SHA-256 midstate is taken at a 64-byte boundary');
  }

  async update(chunks: Buffer[]): Promise<void> {
    for (const chunk of chunks) this.add(chunk);
  }

  midstate(): Buffer {
    if (this.blockLength !== 0) throw new RangeError('the bytes hashed are not a multiple of 64');
    const out = Buffer.alloc(MIDSTATE_BYTES);
    for (let i = 0; i < 8; i++) out.writeInt32BE(this.h[i], 4 * i);
    out.writeUInt32BE(Math.floor(this.bytes / 2 ** 32), 32);
    out.writeUInt32BE(this.bytes % 2 ** 32, 36);
    return out;
  }

  digest(): Buffer {
    const bits = this.bytes * 8;
    const padding = Buffer.alloc((this.blockLength < 56 ? 56 : 120) - this.blockLength + 8);
    padding[0] = 0x80;
    padding.writeUInt32BE(Math.floor(bits / 2 ** 32), padding.length - 8);
    padding.writeUInt32BE(bits % 2 ** 32, padding.length - 4);
    this.add(padding);
    const out = Buffer.alloc(32);
    for (let i = 0; i < 8; i++) out.writeInt32BE(this.h[i], 4 * i);
    return out;
  }

  private add(data: Buffer): void {
    let at = 0;
    this.bytes += data.length;
    if (this.blockLength > 0) {
      at = Math.min(64 - this.blockLength, data.length);
      data.copy(this.block, this.blockLength, 0, at);
      this.blockLength += at;
      if (this.blockLength < 64) return;
      this.compress(this.block, 0);
      this.blockLength = 0;
    }
    for (; at + 64 <= data.length; at += 64) this.compress(data, at);
    this.blockLength = data.copy(this.block, 0, at);
  }

  private compress(data: Buffer, at: number): void {
    const { w, h } = this;
    for (let i = 0, j = at; i < 16; i++, j += 4) w[i] = (data[j] << 24) | (data[j + 1] << 16) | (data[j + 2] << 8) | data[j + 3];
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15];
      const b = w[i - 2];
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
    }
    let a = h[0],
      b = h[1],
      c = h[2],
      d = h[3],
      e = h[4],
      f = h[5],
      g = h[6],
      k = h[7];
    for (let i = 0; i < 64; i++) {
      const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (k + s1 + ((e & f) ^ (~e & g)) + K[i] + w[i]) | 0;
      const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      k = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h[0] = (h[0] + a) | 0;
    h[1] = (h[1] + b) | 0;
    h[2] = (h[2] + c) | 0;
    h[3] = (h[3] + d) | 0;
    h[4] = (h[4] + e) | 0;
    h[5] = (h[5] + f) | 0;
    h[6] = (h[6] + g) | 0;
    h[7] = (h[7] + k) | 0;
  }
}
