// Each workflow's own packages in the fake engine: what a version declares, what is installed,
// the packages offered for a script's imports, Reinstall, and the packages memory remembers.
import type { Dependencies, PackageFix, ProposedPackage, Runtime } from "../bindings";
import type { FakeHealer } from "./fakeHealer";

/** Imports the fake reads (`import x`, `require("x")`) and the packages it offers for them. */
const KNOWN: Record<string, string> = { yaml: "PyYAML", bs4: "beautifulsoup4", tomli: "tomli", "is-number": "is-number" };

export class FakeDeps {
  /** The environment each workflow has, by id; a workflow not here was never installed. */
  environments = new Map<number, Omit<Dependencies, "workflow_id" | "packages" | "state" | "ecosystem" | "location"> & { failed?: boolean }>();
  /** Packages remembered for a signature. */
  fixes = new Map<string, PackageFix[]>();
  /** Makes reinstall_dependencies hang until resolved. */
  reinstallGate: Promise<void> | null = null;

  constructor(private readonly engine: FakeHealer) {}

  dependencies(id: number): Dependencies {
    const kept = this.engine.kept(id);
    const active = kept.versions.find((v) => v.active)!;
    const runtime = kept.workflow.runtime;
    const ecosystem = runtime.kind === "python3" ? "python" : runtime.kind === "node" ? "node" : null;
    const env = this.environments.get(id);
    const lock = env?.lock ?? [];
    const name = (line: string) => line.split(/==|@(?=[^@]*$)/)[0];
    const packages = active.requirements.map((line) => {
      const wanted = line.slice(name(line).length).replace(/^@/, "");
      const locked = lock.find((l) => name(l).toLowerCase() === name(line).toLowerCase());
      return { name: name(line), wanted, installed: locked ? locked.slice(name(locked).length).replace(/^==|^@/, "") : null };
    });
    const state: Dependencies["state"] =
      ecosystem === null || (active.requirements.length === 0 && !env)
        ? "machine"
        : !env
          ? "not_installed"
          : env.failed
            ? "failed"
            : packages.some((p) => p.installed === null)
              ? "outdated"
              : "ready";
    return {
      workflow_id: id, ecosystem, state, packages,
      lock, log: env?.log ?? "", error: env?.error ?? null, interpreter: env?.interpreter ?? "", built_at: env?.built_at ?? null,
      location: ecosystem === null ? "" : `/home/ada/.local/share/healer/workflows/${id}/${ecosystem === "node" ? "node_modules" : ".venv"}`,
    };
  }

  private async reinstall(id: number): Promise<Dependencies> {
    await this.reinstallGate;
    const active = this.engine.kept(id).versions.find((v) => v.active)!;
    const lock = active.requirements.map((r) => (r.includes("==") || r.lastIndexOf("@") > 0 ? r : `${r}==1.0.0`));
    this.environments.set(id, {
      lock, log: `$ pip install -r requirements.txt\nSuccessfully installed ${lock.join(" ")}\n`, error: null,
      interpreter: "Python 3.11.7 (this workflow's own environment)", built_at: new Date().toISOString(),
    });
    const title = this.engine.kept(id).workflow.title;
    await this.engine.happen({ kind: "environment_built", workflow_id: id, title, ok: true, summary: `installed ${lock.join(", ")}` });
    return this.dependencies(id);
  }

  private propose(runtime: Runtime, code: string, id: number | null): ProposedPackage[] {
    if (runtime.kind !== "python3" && runtime.kind !== "node") return [];
    const declared = id === null ? [] : this.engine.kept(id).versions.find((v) => v.active)!.requirements;
    const found: ProposedPackage[] = [];
    code.split("\n").forEach((line, i) => {
      const match = /^\s*(?:import|from)\s+([A-Za-z_][\w]*)|require\(["']([^"']+)["']\)/.exec(line);
      const module = match?.[1] ?? match?.[2];
      const pkg = module ? KNOWN[module] : undefined;
      if (!module || !pkg || declared.some((d) => d.toLowerCase().startsWith(pkg.toLowerCase()))) return;
      found.push({ module, package: pkg, line: i + 1, source: pkg === module ? "same_name" : "table" });
    });
    return found;
  }

  /** Answers `cmd` if it is one of the package commands; `undefined` otherwise. */
  handle(cmd: string, args: Record<string, unknown>): (() => unknown) | undefined {
    switch (cmd) {
      case "get_dependencies":
        return () => this.dependencies(args.id as number);
      case "reinstall_dependencies":
        return () => this.reinstall(args.id as number);
      case "propose_packages":
        return () => this.propose(args.runtime as Runtime, args.code as string, (args.id as number | null) ?? null);
      case "list_package_fixes":
        return () => this.fixes.get(args.signature as string) ?? [];
      default:
        return undefined;
    }
  }
}
