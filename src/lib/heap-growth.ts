import v8 from 'node:v8';

/**
 * How far past what survived its last full collection V8 lets the old generation grow before the
 * next one, in percent. Left to itself V8 allows up to four times that on a heap that collects
 * quickly, and a server under steady uploads fills it with garbage: whatever a request still held
 * at two young collections in a row is moved to the old generation. Half as much again keeps the
 * server's memory near its live size at the cost of more frequent (short) full collections; the
 * figures are in docs/performance.md.
 */
export const HEAP_GROWING_PERCENT = 50;

/** Applies HEAP_GROWING_PERCENT to this process (V8 reads it at each full collection). */
export function limitHeapGrowth(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
