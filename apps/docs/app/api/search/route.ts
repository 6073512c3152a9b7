import { createFromSource } from "fumadocs-core/search/server";
import { source } from "@/lib/source";

// Exported once at build time as a static JSON file; the browser downloads it and searches locally.
export const dynamic = "force-static";
export const revalidate = false;

export const { staticGET: GET } = createFromSource(source, { language: "english" });
