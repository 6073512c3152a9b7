import Link from "next/link";
import { HomeLayout } from "fumadocs-ui/layouts/home";
import { baseOptions } from "@/lib/layout.shared";

const SECTIONS = [
  {
    href: "/docs/dexi",
    title: "Dexi",
    line: "Personal notes with search, tags, folders and spaced repetition.",
  },
  {
    href: "/docs/notes-status",
    title: "notes-status",
    line: "A content queue: notes with statuses, scheduling and evergreen repeats.",
  },
  {
    href: "/docs/chainmail",
    title: "chainmail",
    line: "Mail for agents: a local daemon behind a send policy and an audit log.",
  },
  { href: "/docs/kit", title: "The kit", line: "Declare a tool once and get a correct MCP server." },
];

export default function HomePage() {
  return (
    <HomeLayout {...baseOptions()}>
      <div className="mx-auto flex w-full max-w-3xl flex-1 flex-col gap-6 px-4 py-12">
        <h1 className="text-3xl font-semibold">mcpforge</h1>
        <p className="text-fd-muted-foreground">
          MCP servers for notes and mail, built on one tool-definition kit. Every tool's reference page is
          generated from the server's own <code>tools/list</code>. Agents can read{" "}
          <a className="underline" href="/llms.txt">
            llms.txt
          </a>{" "}
          or{" "}
          <a className="underline" href="/llms-full.txt">
            llms-full.txt
          </a>
          .
        </p>
        <ul className="grid gap-4 sm:grid-cols-2">
          {SECTIONS.map((s) => (
            <li key={s.href} className="rounded-lg border p-4">
              <Link href={s.href} className="font-medium underline">
                {s.title}
              </Link>
              <p className="mt-1 text-sm text-fd-muted-foreground">{s.line}</p>
            </li>
          ))}
        </ul>
      </div>
    </HomeLayout>
  );
}
