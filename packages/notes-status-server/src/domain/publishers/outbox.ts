import { appendFile, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { payloadOf, type PublishEvent, type Publisher } from "./types.js";

/**
 * The default publisher: appends one JSON object per line to a file, for another program (or a person)
 * to pick up. One appendFile call per event, so concurrent writers never interleave within a line.
 */
export class OutboxPublisher implements Publisher {
  readonly name = "outbox";
  constructor(readonly path: string) {}

  async publish(event: PublishEvent): Promise<undefined> {
    await mkdir(dirname(this.path), { recursive: true });
    await appendFile(this.path, `${JSON.stringify(payloadOf(event))}\n`, "utf8");
    return undefined;
  }
}
