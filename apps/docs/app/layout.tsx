import "./global.css";
import { RootProvider } from "fumadocs-ui/provider/next";
import type { Metadata } from "next";
import type { ReactNode } from "react";
import SearchDialog from "@/components/search";

export const metadata: Metadata = {
  title: { template: "%s | mcpforge", default: "mcpforge docs" },
  description: "MCP servers for notes and mail, built on one tool-definition kit",
};

// No web font: the system font stack keeps the site working offline.
export default function Layout({ children }: { children: ReactNode }) {
  return (
    <html lang="en" suppressHydrationWarning>
      <body className="flex min-h-screen flex-col">
        <RootProvider search={{ SearchDialog }}>{children}</RootProvider>
      </body>
    </html>
  );
}
