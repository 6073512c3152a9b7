import type { BaseLayoutProps } from "fumadocs-ui/layouts/shared";

export function baseOptions(): BaseLayoutProps {
  return {
    nav: { title: "mcpforge docs" },
    links: [{ text: "llms.txt", url: "/llms.txt", external: true }],
  };
}
