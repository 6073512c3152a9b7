/**
 * The one tool every bench server carries, kit and baseline alike: the same input and output
 * schemas, the same answer and the same text, so a difference in time is the serving path's.
 */
import { z } from "zod";

export const TOOL_NAME = "search";

export const input = {
  query: z.string().min(1).max(200).describe("What to look for"),
  limit: z.number().int().min(1).max(50).default(10).describe("Most results"),
};

export const output = {
  items: z.array(z.object({ id: z.string(), title: z.string() })),
  total: z.number().int(),
};

export interface Answer {
  items: { id: string; title: string }[];
  total: number;
}

export function answer(query: string, limit: number): Answer {
  return {
    items: Array.from({ length: Math.min(limit, 3) }, (_, i) => ({ id: `n${i}`, title: `${query} ${i}` })),
    total: 3,
  };
}

export const summaryOf = (a: Answer) => `${a.items.length} results`;

/** The arguments of the i-th call: a handful of distinct queries, as a real client would send. */
export const argsOf = (i: number) => ({ query: `q${i % 50}`, limit: 5 });

/** The bearer token the bench's HTTP clients send (the kit checks it; the baseline has no check). */
export const BENCH_TOKEN = "bench-token";
