import type { VectorHit, VectorsPort } from "../store/port.js";
import { VectorSlab } from "./vector-slab.js";

interface Loaded {
  ids: number[];
  slots: Map<number, number>;
  slab: VectorSlab | undefined;
}

function place(into: Loaded, id: number, vec: Float32Array): void {
  into.slab ??= new VectorSlab(vec.length);
  const slot = into.slots.get(id) ?? into.ids.length;
  into.slab.set(slot, vec); // throws on a vector of other dims, before any bookkeeping changes
  if (slot === into.ids.length) {
    into.ids.push(id);
    into.slots.set(id, slot);
  }
}

/** Cosine similarity, -1..1 (vectors are unit length, so it is the dot product). */
export type Hit = VectorHit;

/**
 * Every vector of one model in one contiguous slab, scored all at once by a SIMD kernel (exact, and
 * measured faster than sqlite-vec at 100k x 512). Loaded on first use; reloaded when another process changed vectors
 * (the store's vectors_version counter moved); kept in step with this process's own writes.
 */
export class VectorIndex {
  /** The loaded vectors; a reload builds a new one aside and swaps it in whole. */
  private state: Loaded = { ids: [], slots: new Map(), slab: undefined };
  private loadedVersion: string | undefined;
  private loading: Promise<void> | undefined;

  constructor(
    private readonly store: Pick<VectorsPort, "version" | "each">,
    readonly model: string,
  ) {}

  get size(): number {
    return this.state.ids.length;
  }

  /** Reloads when the stored vectors changed since the last look. */
  async fresh(): Promise<this> {
    const v = await this.store.version();
    if (v !== this.loadedVersion) await this.reload(v);
    return this;
  }

  /**
   * Loads every vector afresh. Concurrent callers share one load; the version is read before the
   * vectors, so a write landing meanwhile moves the counter past it and the next look reloads again.
   */
  private reload(version: string): Promise<void> {
    this.loading ??= this.load(version).finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  /** Builds the new slab aside and swaps it in whole, so a search meanwhile sees the old one. */
  private async load(version: string): Promise<void> {
    const next: Loaded = { ids: [], slots: new Map(), slab: undefined };
    await this.store.each(this.model, (id, vec) => place(next, id, vec));
    this.state = next;
    this.loadedVersion = version;
  }

  /** Records a vector this process just committed (one vectors_version bump). */
  put(id: number, vec: Float32Array): Promise<void> {
    return this.afterOwnWrite(1, () => this.setSlot(id, vec));
  }

  /** Forgets a note this process just deleted (its vector row, if any, went by cascade). */
  remove(id: number): Promise<void> {
    const had = this.state.slots.has(id);
    return this.afterOwnWrite(had ? 1 : 0, () => this.removeSlot(id));
  }

  /**
   * Applies this process's own change without a reload when the stored counter moved by exactly what
   * that change accounts for; anything more means another process wrote too, so everything reloads.
   */
  private async afterOwnWrite(bumps: number, apply: () => void): Promise<void> {
    if (this.loadedVersion === undefined || this.loading) return; // the next look loads it all
    const v = await this.store.version();
    if (this.loading) return;
    if (Number(v) - Number(this.loadedVersion) === bumps) {
      apply();
      this.loadedVersion = v;
    } else await this.reload(v);
  }

  private removeSlot(id: number): void {
    const slot = this.state.slots.get(id);
    if (slot === undefined) return;
    const last = this.state.ids.length - 1;
    if (slot !== last) {
      const lastId = this.state.ids[last]!;
      this.state.slab?.move(last, slot);
      this.state.ids[slot] = lastId;
      this.state.slots.set(lastId, slot);
    }
    this.state.ids.pop();
    this.state.slots.delete(id);
  }

  vector(id: number): Float32Array | undefined {
    const slot = this.state.slots.get(id);
    return slot === undefined ? undefined : this.state.slab?.row(slot);
  }

  private setSlot(id: number, vec: Float32Array): void {
    place(this.state, id, vec);
  }

  /**
   * The k best hits among notes `accept` lets through. `only` limits scoring to those ids (a narrow
   * restricted scope); otherwise every vector is scored and candidates are checked best-first in
   * growing batches, so a few visibility look-ups serve the usual case.
   */
  async search(
    query: Float32Array,
    k: number,
    accept: (ids: number[]) => Promise<Set<number>>,
    only?: readonly number[],
    exclude?: number,
  ): Promise<Hit[]> {
    await this.fresh();
    // A snapshot: another flow's write may move slots while this one awaits visibility look-ups.
    const idsNow = this.state.ids.slice();
    const n = idsNow.length;
    const slab = this.state.slab;
    if (n === 0 || k <= 0 || !slab) return [];
    if (only) {
      const hits: Hit[] = [];
      for (const id of only) {
        const slot = this.state.slots.get(id);
        if (slot === undefined || id === exclude) continue;
        hits.push({ id, cosine: slab.dot(query, slot) });
      }
      return hits.sort(byScore).slice(0, k);
    }
    const scores = slab.scoreAll(query, n);
    const out: Hit[] = [];
    const seen = new Set<number>();
    let want = Math.max(64, k * 4);
    while (out.length < k && seen.size < n) {
      const batch = topSlots(scores, want).filter((s) => !seen.has(s));
      for (const s of batch) seen.add(s);
      const ids = batch.map((s) => idsNow[s]!).filter((id) => id !== exclude);
      const ok = await accept(ids);
      for (const s of batch) {
        const id = idsNow[s]!;
        if (ok.has(id) && id !== exclude) out.push({ id, cosine: scores[s]! });
      }
      if (want >= n) break;
      want *= 4;
    }
    out.sort(byScore);
    // A batch is cut by raw score, but the order compares scores at 1e-6 and then ids, so a slot left
    // out can tie with the k-th hit and come before it by id. Which side of a batch's cut a tie falls
    // on depends on how many notes the caller cannot see scored above it, so every unseen slot that
    // ties with the k-th is checked too: the window is then the visible notes' own top k, exactly.
    if (out.length >= k && seen.size < n) {
      // Math.round(x) >= floor exactly when x >= floor - 0.5: one comparison per slot.
      const floor = Math.round(out[k - 1]!.cosine * 1e6) - 0.5;
      const tied: number[] = [];
      for (let s = 0; s < n; s++) {
        if (scores[s]! * 1e6 >= floor && !seen.has(s) && idsNow[s] !== exclude) tied.push(s);
      }
      if (tied.length > 0) {
        const ok = await accept(tied.map((s) => idsNow[s]!));
        for (const s of tied) if (ok.has(idsNow[s]!)) out.push({ id: idsNow[s]!, cosine: scores[s]! });
        out.sort(byScore);
      }
    }
    return out.slice(0, k);
  }
}

/**
 * Best first; equal scores by id. Scores are compared at 1e-6: the per-slot dot product (a restricted
 * scope) and the SIMD pass over every vector sum in different orders, so the same cosine can differ in
 * its last bits, and a tie must break by id the same way on both paths (pgvector's too).
 */
export function byScore(x: Hit, y: Hit): number {
  return Math.round(y.cosine * 1e6) - Math.round(x.cosine * 1e6) || x.id - y.id;
}

/** Slots of the m highest scores, best first (a bounded insertion list: cheap for small m). */
function topSlots(scores: Float32Array, m: number): number[] {
  const n = scores.length;
  if (m >= n) return Array.from({ length: n }, (_, i) => i).sort((a, b) => scores[b]! - scores[a]!);
  const best: number[] = [];
  let floor = Number.NEGATIVE_INFINITY;
  for (let s = 0; s < n; s++) {
    const v = scores[s]!;
    if (best.length === m && v <= floor) continue;
    let lo = 0;
    let hi = best.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (scores[best[mid]!]! >= v) lo = mid + 1;
      else hi = mid;
    }
    best.splice(lo, 0, s);
    if (best.length > m) best.pop();
    if (best.length === m) floor = scores[best[m - 1]!]!;
  }
  return best;
}
