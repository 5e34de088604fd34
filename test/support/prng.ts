/** mulberry32: a small seeded PRNG, so a randomised test replays exactly from its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `size` bytes from the generator, 32 bits a step (fast enough for files of tens of MiB). */
export function prngBytes(random: () => number, size: number): Buffer {
  const words = new Uint32Array(Math.ceil(size / 4));
  for (let i = 0; i < words.length; i++) words[i] = (random() * 0x1_0000_0000) >>> 0;
  return Buffer.from(words.buffer, 0, size);
}
