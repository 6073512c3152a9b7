import type { Embedder } from "./types.js";
import { normalise } from "./types.js";

export interface OpenAiOptions {
  /** Base URL up to and including /v1, such as http://127.0.0.1:11434/v1 (Ollama) or https://api.openai.com/v1. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Expected vector length; learned from the first answer when absent. */
  dims?: number;
  /** Texts per request. */
  batch?: number;
  timeoutMs?: number;
}

/** Any OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Ollama, LM Studio, vLLM, llama.cpp server…). */
export class OpenAiEmbedder implements Embedder {
  readonly id: string;
  private known: number | undefined;

  constructor(private readonly options: OpenAiOptions) {
    this.id = `openai:${options.model}`;
    this.known = options.dims;
  }

  get dims(): number {
    return this.known ?? 0;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    const batch = this.options.batch ?? 64;
    for (let i = 0; i < texts.length; i += batch)
      out.push(...(await this.request(texts.slice(i, i + batch))));
    return out;
  }

  private async request(input: readonly string[]): Promise<Float32Array[]> {
    // redos-ok: the owner's configured base URL
    const url = `${this.options.baseUrl.replace(/\/+$/, "")}/embeddings`;
    const res = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
      },
      body: JSON.stringify({ model: this.options.model, input: input.map((t) => (t === "" ? " " : t)) }),
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
    });
    if (!res.ok)
      throw new Error(
        `embeddings endpoint ${url} answered ${res.status}: ${(await res.text()).slice(0, 200)}`,
      );
    const json = (await res.json()) as { data?: { index?: number; embedding?: number[] }[] };
    const data = json.data;
    if (!Array.isArray(data) || data.length !== input.length) {
      throw new Error(
        `embeddings endpoint ${url} returned ${Array.isArray(data) ? data.length : "no"} vectors for ${input.length} texts`,
      );
    }
    const sorted = [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    return sorted.map((d) => {
      const v = d.embedding;
      if (!Array.isArray(v) || v.length === 0)
        throw new Error(`embeddings endpoint ${url} returned an empty vector`);
      if (this.known === undefined) this.known = v.length;
      if (v.length !== this.known)
        throw new Error(`embeddings endpoint ${url} returned ${v.length} dims, expected ${this.known}`);
      return normalise(Float32Array.from(v));
    });
  }
}
