import { describe, expect, it } from "vitest";
import { createScoreKernel } from "../src/embed/simd-kernel.js";
import { VectorSlab } from "../src/embed/vector-slab.js";

let seed = 7;
const rand = () => {
  seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};
const vector = (dims: number) => Float32Array.from({ length: dims }, () => rand() * 2 - 1);

/** The reference: a sequential dot product in double precision. */
const exact = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);

describe("the SIMD score kernel", () => {
  it("assembles into a module this runtime validates and runs", () => {
    const kernel = createScoreKernel();
    expect(kernel?.memory.buffer.byteLength).toBeGreaterThan(0);
    // One row, one query: the kernel writes their dot product where it is told to.
    const f = new Float32Array(kernel!.memory.buffer);
    f.set([1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 0); // query
    f.set([2, 0.5, -1, 0.25, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 16); // row
    kernel!.scores(0, 64, 1, 16, 128);
    expect(new Float32Array(kernel!.memory.buffer)[32]).toBe(1 * 2 + 2 * 0.5 - 3 + 4 * 0.25);
  });

  for (const dims of [1, 3, 16, 17, 100, 512, 1536]) {
    it(`scores every row like a plain dot product (${dims} dims), with and without SIMD`, () => {
      const rows = Array.from({ length: 37 }, () => vector(dims));
      const query = vector(dims);
      const simd = new VectorSlab(dims);
      const plain = new VectorSlab(dims, { simd: false });
      expect([simd.simd, plain.simd]).toEqual([true, false]);
      for (const slab of [simd, plain]) {
        rows.forEach((r, i) => {
          slab.set(i, r);
        });
        const scores = slab.scoreAll(query, rows.length);
        expect(scores).toHaveLength(rows.length);
        rows.forEach((r, i) => {
          expect(scores[i]).toBeCloseTo(exact(query, r), 3);
          expect(slab.dot(query, i)).toBeCloseTo(exact(query, r), 3);
        });
      }
    });
  }

  it.each([true, false])("keeps stored rows across growth and copies rows on move (simd %s)", (simd) => {
    const slab = new VectorSlab(20, { simd });
    const rows = Array.from({ length: 5000 }, () => vector(20)); // past the initial 1024 rows, twice
    rows.forEach((r, i) => {
      slab.set(i, r);
    });
    expect(slab.row(0)).toEqual(rows[0]);
    expect(slab.row(4999)).toEqual(rows[4999]);
    slab.move(4999, 3);
    expect(slab.row(3)).toEqual(rows[4999]);
    const scores = slab.scoreAll(rows[4999]!, 5000);
    expect(scores[3]).toBeCloseTo(scores[4999]!, 5);
  });

  it("returns scores that later writes do not change, and none for an empty slab", () => {
    const slab = new VectorSlab(8);
    expect(slab.scoreAll(vector(8), 0)).toHaveLength(0);
    slab.set(0, Float32Array.from([1, 0, 0, 0, 0, 0, 0, 0]));
    const scores = slab.scoreAll(Float32Array.from([2, 0, 0, 0, 0, 0, 0, 0]), 1);
    for (let i = 1; i < 3000; i++) slab.set(i, vector(8)); // grows the memory under the old scores
    expect(scores[0]).toBe(2);
  });

  it("moves to plain memory, keeping every row, when the WebAssembly memory cannot grow", () => {
    const real = createScoreKernel()!;
    let grows = 0;
    const kernel = {
      scores: real.scores,
      memory: {
        get buffer() {
          return real.memory.buffer;
        },
        grow(pages: number) {
          if (++grows > 2) throw new RangeError("WebAssembly.Memory.grow(): Maximum memory size exceeded");
          return real.memory.grow(pages);
        },
      },
    };
    const slab = new VectorSlab(64, { kernel });
    const rows = Array.from({ length: 10_000 }, () => vector(64));
    rows.forEach((r, i) => {
      slab.set(i, r);
    });
    expect(slab.simd).toBe(false);
    expect(slab.row(0)).toEqual(rows[0]);
    expect(slab.row(9999)).toEqual(rows[9999]);
    const query = vector(64);
    const scores = slab.scoreAll(query, rows.length);
    expect(scores[5000]).toBeCloseTo(exact(query, rows[5000]!), 3);
  });

  it("refuses vectors and queries of other dimensions", () => {
    const slab = new VectorSlab(4);
    expect(() => slab.set(0, vector(5))).toThrow(/5 dims/);
    slab.set(0, vector(4));
    expect(() => slab.scoreAll(vector(3), 1)).toThrow(/3 dims/);
  });
});
