import defaultMdxComponents from "fumadocs-ui/mdx";
import type { MDXComponents } from "mdx/types";
import type { ComponentProps } from "react";

/** Links to files (mcp-tools.json, llms.txt, Markdown copies) are not pages: the router must not prefetch them. */
const FILE_LINK = /\.(json|txt|md)(?:$|[?#])/;

function Anchor(props: ComponentProps<"a">) {
  const DefaultA = defaultMdxComponents.a as (p: ComponentProps<"a">) => React.ReactNode;
  if (typeof props.href === "string" && FILE_LINK.test(props.href)) return <a {...props} />;
  return <DefaultA {...props} />;
}

export function getMDXComponents(components?: MDXComponents): MDXComponents {
  return { ...defaultMdxComponents, a: Anchor, ...components };
}
