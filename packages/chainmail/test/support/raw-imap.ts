/**
 * A bare IMAP session over a socket, for asking the server what another client would see (LSUB,
 * LIST (SUBSCRIBED)) without imapflow's merging of LIST and LSUB answers in between.
 */
import net from "node:net";

export interface RawImap {
  /** Sends one command and resolves with its untagged lines once the tagged OK arrives. */
  command(text: string): Promise<string[]>;
  close(): void;
}

export async function rawImap(port: number, user: string, password: string): Promise<RawImap> {
  const socket = net.connect(port, "127.0.0.1");
  let buffer = "";
  let waiter: (() => void) | undefined;
  socket.setEncoding("utf8");
  socket.on("data", (d: string) => {
    buffer += d;
    waiter?.();
  });
  const nextLine = async (): Promise<string> => {
    for (;;) {
      const i = buffer.indexOf("\r\n");
      if (i >= 0) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 2);
        return line;
      }
      await new Promise<void>((resolve) => {
        waiter = resolve;
      });
      waiter = undefined;
    }
  };
  await nextLine(); // greeting
  let n = 0;
  const command = async (text: string): Promise<string[]> => {
    const tag = `R${++n}`;
    socket.write(`${tag} ${text}\r\n`);
    const untagged: string[] = [];
    for (;;) {
      const line = await nextLine();
      if (line.startsWith(`${tag} `)) {
        if (!line.startsWith(`${tag} OK`)) throw new Error(`${text}: ${line}`);
        return untagged;
      }
      untagged.push(line);
    }
  };
  await command(`LOGIN ${user} ${password}`);
  return { command, close: () => socket.destroy() };
}

/** The mailbox name at the end of an untagged LIST or LSUB line (quoted or an atom). */
export function listedName(line: string): string {
  const quoted = /"((?:[^"\\]|\\.)*)"$/.exec(line);
  if (quoted) return quoted[1]!.replace(/\\(.)/g, "$1");
  return line.slice(line.lastIndexOf(" ") + 1);
}

/**
 * The folders a client that shows subscribed folders only lists, asked both ways it can ask; a
 * subscription left behind by a deleted folder is listed too (LIST marks it \NonExistent).
 */
export async function subscribedFolders(
  imap: RawImap,
): Promise<{ lsub: string[]; listSubscribed: string[] }> {
  const lsub = (await imap.command('LSUB "" "*"')).filter((l) => l.startsWith("* LSUB ")).map(listedName);
  const listSubscribed = (await imap.command('LIST (SUBSCRIBED) "" "*"'))
    .filter((l) => l.startsWith("* LIST "))
    .map(listedName);
  return { lsub: lsub.sort(), listSubscribed: listSubscribed.sort() };
}
