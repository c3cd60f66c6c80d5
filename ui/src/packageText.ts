// Words a person reads about a workflow's own packages: what changed between two versions, how
// its environment stands, where a proposed package name came from.
import type { Dependencies, EnvironmentState, ProposalSource, Runtime } from "./bindings";

/** A requirement line's package name: `PyYAML==6.0.2` → PyYAML, `@slack/webhook@7.0.4` → @slack/webhook. */
export function packageName(line: string): string {
  const text = line.trim();
  const at = text.lastIndexOf("@");
  if (at > 0) return text.slice(0, at);
  const end = text.search(/[=<>!~\s[]/);
  return end < 0 ? text : text.slice(0, end);
}

/** What a requirement asks for beyond the name: "==6.0.2", "7.0.4", "" for any version. */
function wanted(line: string): string {
  return line.trim().slice(packageName(line).length).replace(/^@/, "");
}

export type PackageChange =
  | { kind: "added"; name: string; wanted: string }
  | { kind: "removed"; name: string; wanted: string }
  | { kind: "changed"; name: string; from: string; to: string };

/** How the packages of two versions differ, in the order of the newer list (removals last). */
export function packageChanges(from: string[], to: string[]): PackageChange[] {
  const key = (line: string) => packageName(line).toLowerCase().replace(/[-_.]+/g, "-");
  const before = new Map(from.map((line) => [key(line), line]));
  const after = new Map(to.map((line) => [key(line), line]));
  const changes: PackageChange[] = [];
  for (const [k, line] of after) {
    const old = before.get(k);
    if (old === undefined) changes.push({ kind: "added", name: packageName(line), wanted: wanted(line) });
    else if (old.trim() !== line.trim()) changes.push({ kind: "changed", name: packageName(line), from: wanted(old), to: wanted(line) });
  }
  for (const [k, line] of before) {
    if (!after.has(k)) changes.push({ kind: "removed", name: packageName(line), wanted: wanted(line) });
  }
  return changes;
}

/** "any version", "6.0.2", ">=2". */
export function versionWords(spec: string): string {
  const text = spec.trim();
  if (!text || text === "*") return "any version";
  return text.startsWith("==") ? text.slice(2) : text;
}

/** The language's name, for sentences. */
export function languageOf(runtime: Runtime): string {
  return runtime.kind === "node" ? "Node.js" : "Python";
}

/** One sentence on how the environment stands. */
export function stateSentence(deps: Dependencies, runtime: Runtime): string {
  const where = runtime.kind === "node" ? "its own node_modules folder" : "its own Python environment";
  const sentences: Record<EnvironmentState, string> = {
    machine:
      runtime.kind === "python3" || runtime.kind === "node"
        ? `It needs nothing beyond ${languageOf(runtime)}'s standard library, so it runs with this machine's ${languageOf(runtime)}.`
        : "Shell workflows use the programs installed on this machine; they have no packages of their own.",
    not_installed: `Its packages are not installed yet. They go into ${where} before its next run.`,
    ready: `Its packages are installed in ${where}.`,
    outdated: `The version that runs now asks for other packages than are installed. They are installed before its next run.`,
    failed: "The last installation failed. Healer tries again before the next run, or you can install now.",
  };
  return sentences[deps.state];
}

/** Why a proposed package has the name it has. */
export function proposalWhy(source: ProposalSource, module: string): string | null {
  switch (source) {
    case "memory":
      return `Healer installed it for ${module} before`;
    case "table":
      return `the package that provides ${module}`;
    case "same_name":
      return null;
  }
}
