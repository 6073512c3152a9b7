/** Worker-thread entry: embeds batches off the main thread with the provider named in workerData. */
import { parentPort, workerData } from "node:worker_threads";
import { createEmbedder, type EmbedderConfig } from "./config.js";

const embedder = createEmbedder((workerData as { config: EmbedderConfig }).config);

parentPort?.on("message", async (msg: { id: number; texts: string[] }) => {
  try {
    const vectors = await embedder.embed(msg.texts);
    parentPort?.postMessage(
      { id: msg.id, vectors },
      vectors.map((v) => v.buffer as ArrayBuffer),
    );
  } catch (err) {
    parentPort?.postMessage({ id: msg.id, error: (err as Error).message });
  }
});
