import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { createEmbedder, type EmbedderConfig } from "./config.js";
import type { Embedder } from "./types.js";

/**
 * Where the built worker lives: beside the chunk or bin in dist that runs this, or in dist/ when
 * running from sources.
 */
function workerPath(): string {
  for (const rel of [
    "./embed/worker.js",
    "../embed/worker.js",
    "./worker.js",
    "../../dist/embed/worker.js",
  ]) {
    const p = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(p)) return p;
  }
  throw new Error("dist/embed/worker.js not found: build the package first (npm run build)");
}

interface Job {
  id: number;
  texts: string[];
  resolve: (v: Float32Array[]) => void;
  reject: (e: Error) => void;
}

/**
 * Embeds in worker threads (bulk imports, reindex): the model runs off the main thread, and batches are
 * spread over `size` workers. Same provider and vectors as in-process embedding.
 */
export class WorkerPoolEmbedder implements Embedder {
  readonly id: string;
  readonly dims: number;
  private readonly workers: Worker[] = [];
  private readonly idle: Worker[] = [];
  private readonly queue: Job[] = [];
  private readonly running = new Map<Worker, Job>();
  private nextId = 1;

  constructor(
    config: EmbedderConfig,
    size: number,
    private readonly batch = 16,
  ) {
    const probe = createEmbedder(config);
    this.id = probe.id;
    this.dims = probe.dims;
    const path = workerPath();
    for (let i = 0; i < Math.max(1, size); i++) {
      const w = new Worker(path, { workerData: { config } });
      w.on("message", (msg: { id: number; vectors?: Float32Array[]; error?: string }) => this.done(w, msg));
      w.on("error", (err) => this.fail(w, err));
      this.workers.push(w);
      this.idle.push(w);
    }
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const parts: Promise<Float32Array[]>[] = [];
    for (let i = 0; i < texts.length; i += this.batch) {
      const chunk = texts.slice(i, i + this.batch);
      parts.push(
        new Promise((resolve, reject) =>
          this.queue.push({ id: this.nextId++, texts: chunk, resolve, reject }),
        ),
      );
    }
    this.pump();
    return (await Promise.all(parts)).flat();
  }

  private pump(): void {
    while (this.idle.length > 0 && this.queue.length > 0) {
      const w = this.idle.pop()!;
      const job = this.queue.shift()!;
      this.running.set(w, job);
      w.postMessage({ id: job.id, texts: job.texts });
    }
  }

  private done(w: Worker, msg: { id: number; vectors?: Float32Array[]; error?: string }): void {
    const job = this.running.get(w);
    this.running.delete(w);
    this.idle.push(w);
    if (job) {
      if (msg.error !== undefined || !msg.vectors)
        job.reject(new Error(msg.error ?? "worker returned no vectors"));
      else job.resolve(msg.vectors);
    }
    this.pump();
  }

  private fail(w: Worker, err: Error): void {
    const job = this.running.get(w);
    this.running.delete(w);
    job?.reject(err);
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
