import { createScoreKernel, KERNEL_LANES, type ScoreKernel } from "./simd-kernel.js";

const PAGE = 65_536;

/**
 * Fixed-size float rows in one block of memory, scored against a query all at once. The block is the
 * SIMD kernel's WebAssembly memory when the runtime has SIMD, else a plain ArrayBuffer scored by a
 * JavaScript loop. Layout, in floats: [query | rows (capacity x stride) | scores (capacity)]. Rows
 * are zero-padded to a multiple of the kernel's width, which leaves every dot product unchanged.
 */
export class VectorSlab {
  readonly stride: number;
  private capacity = 0;
  private floats: Float32Array;
  private kernel: ScoreKernel | undefined;

  /**
   * `simd: false` uses the JavaScript loop even where SIMD is available (tests compare the two);
   * `kernel` supplies one (tests give it a memory that refuses to grow).
   */
  constructor(
    readonly dims: number,
    options: { simd?: boolean; kernel?: ScoreKernel } = {},
  ) {
    this.stride = Math.ceil(dims / KERNEL_LANES) * KERNEL_LANES;
    this.kernel = options.simd === false ? undefined : (options.kernel ?? createScoreKernel());
    this.floats = new Float32Array(0);
    this.ensure(1024);
  }

  get simd(): boolean {
    return this.kernel !== undefined;
  }

  private get rowsAt(): number {
    return this.stride;
  }

  private get scoresAt(): number {
    return this.stride + this.capacity * this.stride;
  }

  /** Makes room for `rows` rows, keeping the ones stored. */
  ensure(rows: number): void {
    if (rows <= this.capacity) return;
    const capacity = Math.max(rows, this.capacity * 2);
    const floats = this.stride + capacity * this.stride + capacity;
    if (!this.growKernelMemory(floats * 4)) {
      const grown = new Float32Array(floats);
      grown.set(this.floats.subarray(0, this.stride + this.capacity * this.stride));
      this.floats = grown;
    }
    this.capacity = capacity;
  }

  /**
   * Grows the kernel's memory to `bytes` (rows keep their offset: nothing moves). False when there is
   * no kernel, or when the memory cannot grow (WebAssembly stops at 4 GiB, a million or two vectors of
   * 512 dims): the slab then goes on in plain memory with the JavaScript loop.
   */
  private growKernelMemory(bytes: number): boolean {
    const memory = this.kernel?.memory;
    if (!memory) return false;
    try {
      const missing = bytes - memory.buffer.byteLength;
      if (missing > 0) memory.grow(Math.ceil(missing / PAGE));
      this.floats = new Float32Array(memory.buffer);
      return true;
    } catch {
      this.kernel = undefined;
      return false;
    }
  }

  set(slot: number, vec: Float32Array): void {
    if (vec.length !== this.dims) throw new Error(`vector of ${vec.length} dims in a slab of ${this.dims}`);
    this.ensure(slot + 1);
    const at = this.rowsAt + slot * this.stride;
    this.floats.set(vec, at);
    this.floats.fill(0, at + this.dims, at + this.stride);
  }

  /** A copy of a row's `dims` floats. */
  row(slot: number): Float32Array {
    const at = this.rowsAt + slot * this.stride;
    return this.floats.slice(at, at + this.dims);
  }

  /** Copies row `from` over row `to`. */
  move(from: number, to: number): void {
    const at = this.rowsAt;
    this.floats.copyWithin(at + to * this.stride, at + from * this.stride, at + (from + 1) * this.stride);
  }

  /** The query's dot product with rows 0..n-1, as a fresh array. */
  scoreAll(query: Float32Array, n: number): Float32Array {
    this.checkQuery(query);
    this.ensure(n);
    if (this.kernel) {
      this.floats.set(query, 0);
      this.floats.fill(0, query.length, this.stride);
      this.kernel.scores(0, this.rowsAt * 4, n, this.stride, this.scoresAt * 4);
      return this.floats.slice(this.scoresAt, this.scoresAt + n);
    }
    const out = new Float32Array(n);
    for (let s = 0; s < n; s++) out[s] = this.dot(query, s);
    return out;
  }

  /** The query's dot product with one row. */
  dot(query: Float32Array, slot: number): number {
    this.checkQuery(query);
    const d = this.floats;
    const dims = this.dims;
    let off = this.rowsAt + slot * this.stride;
    let a = 0;
    let b = 0;
    let c = 0;
    let e = 0;
    let i = 0;
    for (; i + 4 <= dims; i += 4, off += 4) {
      a += query[i]! * d[off]!;
      b += query[i + 1]! * d[off + 1]!;
      c += query[i + 2]! * d[off + 2]!;
      e += query[i + 3]! * d[off + 3]!;
    }
    for (; i < dims; i++, off++) a += query[i]! * d[off]!;
    return a + b + c + e;
  }

  private checkQuery(query: Float32Array): void {
    if (query.length !== this.dims)
      throw new Error(`query of ${query.length} dims against vectors of ${this.dims}`);
  }
}
