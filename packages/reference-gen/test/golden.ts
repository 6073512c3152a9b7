import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Compares generated files with a committed folder of expected files. UPDATE_GOLDEN=1 rewrites the
 * folder instead. Fails with a line diff per differing file, and names missing or unexpected files.
 */
export async function expectFilesGolden(actual: ReadonlyMap<string, string>, folder: URL): Promise<void> {
  const dir = fileURLToPath(folder);
  if (process.env["UPDATE_GOLDEN"] === "1") {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    for (const [name, content] of actual) writeFileSync(join(dir, name), content);
    return;
  }
  if (!existsSync(dir)) throw new Error(`${dir} is missing; run the tests with UPDATE_GOLDEN=1 to write it`);
  const { lineDiff } = await import("@mcpforge/toolkit/testing");
  const problems: string[] = [];
  const expectedNames = readdirSync(dir).sort();
  for (const name of expectedNames) {
    const got = actual.get(name);
    if (got === undefined) problems.push(`${name}: expected but not generated`);
    else {
      const want = readFileSync(join(dir, name), "utf8");
      if (want !== got) problems.push(`${name} differs:\n${lineDiff(want, got)}`);
    }
  }
  for (const name of actual.keys()) {
    if (!expectedNames.includes(name)) problems.push(`${name}: generated but not in ${dir}`);
  }
  if (problems.length > 0) {
    throw new Error(
      `Generated reference differs from ${dir} (rerun with UPDATE_GOLDEN=1 if intended):\n${problems.join("\n")}`,
    );
  }
}
