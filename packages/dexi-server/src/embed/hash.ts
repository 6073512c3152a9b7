import type { Embedder } from "./types.js";
import { normalise } from "./types.js";

/**
 * A lexical stand-in: hashed bag of lower-cased words and character trigrams, 512 dims. It knows no
 * meaning (synonyms do not match) but is instant and deterministic, so tests and benchmarks of
 * plumbing use it (`DEXI_EMBEDDINGS=hash`). Never the default.
 */
export class HashEmbedder implements Embedder {
  readonly id = "hash-512";
  readonly dims = 512;

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((t) => hashVector(t, this.dims));
  }
}

export function hashVector(text: string, dims: number): Float32Array {
  const v = new Float32Array(dims);
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  for (const w of words) {
    add(v, w, 1);
    const padded = ` ${w} `;
    for (let i = 0; i + 3 <= padded.length; i++) add(v, padded.slice(i, i + 3), 0.3);
  }
  if (words.length === 0) v[0] = 1;
  return normalise(v);
}

function add(v: Float32Array, token: string, weight: number): void {
  let h = 2166136261;
  for (let i = 0; i < token.length; i++) h = Math.imul(h ^ token.charCodeAt(i), 16777619);
  const idx = (h >>> 0) % v.length;
  v[idx]! += (h & 0x80000000 ? -1 : 1) * weight;
}
