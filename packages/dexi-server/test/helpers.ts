import type { Client } from "@modelcontextprotocol/client";
import { connectInMemory } from "@mcpforge/toolkit/testing";
import { type App, openApp } from "../src/app.js";
import type { Restriction, Viewer } from "../src/domain/access.js";
import { HashEmbedder } from "../src/embed/hash.js";
import type { Embedder } from "../src/embed/types.js";
import { createDexiServer, DEXI_SCOPES } from "../src/mcp/server.js";

export const ALL_SCOPES = [...DEXI_SCOPES];

export interface Clock {
  now: () => number;
  set(ms: number): void;
  advance(ms: number): void;
}

export function clock(start = Date.parse("2026-03-10T12:00:00Z")): Clock {
  let t = start;
  return {
    now: () => t,
    set: (ms) => {
      t = ms;
    },
    advance: (ms) => {
      t += ms;
    },
  };
}

/** An in-memory database with the lexical hash embedder (fast); pass a real one for semantic tests. */
export function memoryApp(options: { embedder?: Embedder; now?: () => number; timeZone?: string } = {}): App {
  return openApp(":memory:", {
    embedder: options.embedder ?? new HashEmbedder(),
    log: () => {},
    ...(options.now ? { now: options.now } : {}),
    ...(options.timeZone ? { timeZone: options.timeZone } : {}),
  });
}

export function userId(app: App, name: string): number {
  return app.store.accounts.ensureUser(name, Date.now()).id;
}

export interface Session {
  client: Client;
  close(): Promise<void>;
  call(name: string, args?: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Calls a tool that must fail; returns its error body. */
  fail(
    name: string,
    args?: Record<string, unknown>,
  ): Promise<{ reason: string; message: string; hint: string }>;
  raw(
    name: string,
    args?: Record<string, unknown>,
  ): Promise<{ isError: boolean; structured: Record<string, unknown> }>;
}

/** A real SDK client, over the in-memory transport, acting as `user` with the given grant. */
export async function connect(
  app: App,
  user: string,
  options: { scopes?: string[]; restriction?: Restriction } = {},
): Promise<Session> {
  const id = userId(app, user);
  const viewer = (scopes: readonly string[]): Viewer => ({
    userId: id,
    scopes,
    ...(options.restriction ? { restriction: options.restriction } : {}),
  });
  const kit = createDexiServer({ notes: app.notes, viewerFor: (c) => viewer(c.scopes), log: () => {} });
  const conn = await connectInMemory(kit, { scopes: options.scopes ?? ALL_SCOPES, clientId: user });
  const raw = async (name: string, args: Record<string, unknown> = {}) => {
    const r = await conn.client.callTool({ name, arguments: args });
    return {
      isError: r.isError === true,
      structured: JSON.parse(JSON.stringify(r.structuredContent ?? {})) as Record<string, unknown>,
    };
  };
  return {
    client: conn.client,
    close: conn.close,
    raw,
    call: async (name, args) => {
      const r = await raw(name, args);
      if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.structured)}`);
      return r.structured;
    },
    fail: async (name, args) => {
      const r = await raw(name, args);
      if (!r.isError) throw new Error(`${name} unexpectedly succeeded: ${JSON.stringify(r.structured)}`);
      return (r.structured as { error: { reason: string; message: string; hint: string } }).error;
    },
  };
}

export interface Item {
  id: string;
  title: string;
  snippet: string;
  tags: string[];
  source: string;
  source_url: string | null;
  created: string;
  updated: string;
  folder?: string;
  shared?: true;
  owner?: string;
  similarity?: number;
}

export const items = (r: Record<string, unknown>) => r["items"] as Item[];
