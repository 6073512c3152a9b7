/** A sentence-embedding model. Vectors come back L2-normalised (providers normalise when needed). */
export interface Embedder {
  /** Stored with every vector; a different id means the vectors must be rebuilt (`dexi reindex`). */
  readonly id: string;
  readonly dims: number;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  close?(): Promise<void>;
}

/** How much of a note is embedded: the title and the start of the body (longer text costs time, adds little). */
export const EMBED_CHARS = 2000;

export function noteText(title: string, body: string): string {
  const text = title && body ? `${title}\n\n${body}` : title || body;
  return text.length > EMBED_CHARS ? text.slice(0, EMBED_CHARS) : text;
}

export function normalise(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i]! * v[i]!;
  const norm = Math.sqrt(sum);
  if (norm > 0 && Math.abs(norm - 1) > 1e-6) for (let i = 0; i < v.length; i++) v[i]! /= norm;
  return v;
}
