/** `data` cut into pieces of `size` bytes (the last one shorter), as views of it. */
export function chunksOf(data: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < data.length; at += size) out.push(data.subarray(at, at + size));
  return out;
}
