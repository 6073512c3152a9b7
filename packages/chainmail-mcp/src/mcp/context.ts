import type { DaemonClient } from "@mcpforge/chainmail";
import type { GroupAcks } from "./acks.js";

interface WithFiles {
  attachments?: string[] | undefined;
  inline?: Array<{ name: string; path: string }> | undefined;
}

/** What every handler gets: the daemon client (kind `mcp`, so the audit log says who called). */
export interface ChainmailContext {
  client: DaemonClient;
  /**
   * Uploads a compose call's files to the daemon (opened here with O_NOFOLLOW, checked as regular
   * files outside the chainmail home) and names each by its upload instead of its path.
   */
  upload<P extends WithFiles>(params: P): Promise<P>;
  /** read_events' group acknowledgements, sent once a result has gone out (one per server). */
  acks: GroupAcks;
}

/**
 * What the gate reads from the daemon's accounts list. `expungeAllowedSomewhere` also decides the
 * draft tools' destructive hint once they exist; while the daemon is unreachable everything is false.
 */
export interface GateState {
  reachable: boolean;
  expungeAllowedSomewhere: boolean;
  deleteFolderAllowedSomewhere: boolean;
}

export const UNREACHABLE: GateState = Object.freeze({
  reachable: false,
  expungeAllowedSomewhere: false,
  deleteFolderAllowedSomewhere: false,
});

export const GROUPS = {
  accounts: "Accounts and folders",
  reading: "Reading",
  files: "Files",
  organizing: "Organizing",
  events: "Events and the cache",
  items: "Work items",
  sending: "Sending and drafts",
} as const;
