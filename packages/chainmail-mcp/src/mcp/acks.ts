/**
 * read_events' group acknowledgements. A group read through MCP asks the daemon not to acknowledge
 * (`defer_ack`) and acknowledges with `watch.ack` once the kit has handed the result to the MCP
 * transport, so a call cancelled before its result went out acknowledges nothing. A read of a group
 * waits for that group's acknowledgement still on its way, so it never gets the same page again.
 */
import type { DaemonClient } from "@mcpforge/chainmail";

export class GroupAcks {
  private readonly inFlight = new Map<string, Promise<void>>();

  constructor(
    private readonly client: DaemonClient,
    private readonly log: (line: string) => void,
  ) {}

  /** Acknowledges `group` through `cursor`; a failure is logged and the page comes again (at least once). */
  send(group: string, cursor: number): Promise<void> {
    const sent: Promise<void> = this.client
      .call("watch.ack", { group, cursor })
      .then(
        () => undefined,
        (err: Error) => this.log(`chainmail-mcp: cannot acknowledge group ${group}: ${err.message}`),
      )
      .finally(() => {
        if (this.inFlight.get(group) === sent) this.inFlight.delete(group);
      });
    this.inFlight.set(group, sent);
    return sent;
  }

  /** Resolves once no acknowledgement of `group` is on its way. */
  settled(group: string): Promise<void> {
    return this.inFlight.get(group) ?? Promise.resolve();
  }
}
