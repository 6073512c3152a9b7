import { HashEmbedder } from "./hash.js";
import { OpenAiEmbedder } from "./openai.js";
import type { Embedder } from "./types.js";
import { UseEmbedder } from "./use.js";

/** Which embedding provider to use; env vars override the database's saved config. */
export interface EmbedderConfig {
  provider: "use" | "openai" | "hash";
  url?: string;
  model?: string;
  apiKey?: string;
  dims?: number;
}

export const EMBEDDER_CONFIG_KEYS = [
  "embeddings.provider",
  "embeddings.url",
  "embeddings.model",
  "embeddings.dims",
] as const;

/**
 * Resolution order: DEXI_EMBEDDINGS (use|openai|hash), DEXI_EMBEDDINGS_URL, DEXI_EMBEDDINGS_MODEL,
 * DEXI_EMBEDDINGS_API_KEY (else OPENAI_API_KEY), DEXI_EMBEDDINGS_DIMS; then what `dexi settings
 * --embeddings…` saved in the database; then the offline USE model.
 */
export function resolveEmbedderConfig(
  saved: (key: string) => string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): EmbedderConfig {
  const provider = (env["DEXI_EMBEDDINGS"] || saved("embeddings.provider") || "use") as string;
  if (provider !== "use" && provider !== "openai" && provider !== "hash") {
    throw new Error(`Unknown embeddings provider "${provider}": use one of use, openai, hash`);
  }
  const url = env["DEXI_EMBEDDINGS_URL"] || saved("embeddings.url");
  const model = env["DEXI_EMBEDDINGS_MODEL"] || saved("embeddings.model");
  const apiKey = env["DEXI_EMBEDDINGS_API_KEY"] || env["OPENAI_API_KEY"];
  const dimsText = env["DEXI_EMBEDDINGS_DIMS"] || saved("embeddings.dims");
  return {
    provider,
    ...(url ? { url } : {}),
    ...(model ? { model } : {}),
    ...(apiKey ? { apiKey } : {}),
    ...(dimsText ? { dims: Number(dimsText) } : {}),
  };
}

export function createEmbedder(config: EmbedderConfig): Embedder {
  switch (config.provider) {
    case "use":
      return new UseEmbedder();
    case "hash":
      return new HashEmbedder();
    case "openai":
      if (!config.url || !config.model) {
        throw new Error(
          "The openai embeddings provider needs a URL and a model (DEXI_EMBEDDINGS_URL, DEXI_EMBEDDINGS_MODEL)",
        );
      }
      return new OpenAiEmbedder({
        baseUrl: config.url,
        model: config.model,
        ...(config.apiKey ? { apiKey: config.apiKey } : {}),
        ...(config.dims ? { dims: config.dims } : {}),
      });
  }
}
