// The fake engine's projects (src/engine/projects.rs): a folder check, the form's validation,
// a board read from the tasks a test sets, sessions with their steps, and Stop — answering the
// same commands as the engine. The folder dialog (the dialog plugin's `open`) answers too.
import type { Acceptance, AcceptHow, ApprovalRule, ChangeReview, FieldProblem, FolderCheck, HealerConfig, HealerInvocation, Project, ProjectDetail, ProjectInput, ProjectSummary, ProjectTask, SessionDetail, SessionRecord, SessionStep, SnapshotRecord, SteeringEntry, PullRequestRecord, ReviewComment, TaskListProblem, Unaccepted } from "../bindings";

export const FOLDER = "/home/ada/code/greeter";

export function task(id: string, title: string, fields: Partial<ProjectTask> = {}): ProjectTask {
  return { id, title, status: "open", priority: 2, created_at: "", updated_at: "", ...fields };
}

export function step(text: string, fields: Partial<SessionStep> = {}): SessionStep {
  return {
    at: new Date().toISOString(), source: "agent", kind: "text", text, tool: null, arguments: null,
    call_id: null, is_error: false, model: null, usage: null, ...fields,
  };
}

export class FakeProjects {
  /** `clusterConnected`: whether the fake engine is connected to a cluster. */
  constructor(private clusterConnected: () => boolean = () => false) {}

  projects: Project[] = [];
  tasks: ProjectTask[] = [];
  problems: TaskListProblem[] = [];
  progress = "";
  sessions: SessionDetail[] = [];
  /** What each session changed (by session id); absent: nothing yet. */
  reviews = new Map<number, ChangeReview>();
  /** "Open in editor" / "Open a terminal here" presses. */
  opened: { sessionId: number; terminal: boolean }[] = [];
  editorCommand: string | null = null;
  steering: SteeringEntry[] = [];
  heals: HealerInvocation[] = [];
  /** The engine's defaults (src/store/healer_config.rs). */
  healerConfig: HealerConfig = {
    enabled: true,
    maxInvocationsPerSubtask: 1,
    scenarios: { onInitFailure: true, onVerificationFailure: true, onSubtaskFailure: true, onRuntimeError: true, onStuckSubtask: false },
    allowedSpells: [],
    forbiddenSpells: [],
    mode: "conservative",
    stuckAfterHours: 2,
  };
  snapshots: SnapshotRecord[] = [];
  /** What the person allowed for good by answering an agent's questions. */
  approvalRules: ApprovalRule[] = [];
  /** The task's work waiting on its branch (Accept, Discard), and what accepting it comes to. */
  unaccepted: Unaccepted | null = null;
  acceptance: Acceptance | null = null;
  finished: { act: "accept" | "resolve" | "discard"; taskId: string; how: AcceptHow | null }[] = [];
  /** The host token the person gave (none: opening a pull request asks for one). */
  hostToken: string | null = null;
  pullRequest: PullRequestRecord | null = null;
  /** The remote's host does not say what it runs: opening asks for the API address first. */
  unknownHost = false;
  pullRequestApis: (string | null)[] = [];
  /** The person's comments on the task's lines, and each sending of them. */
  comments: ReviewComment[] = [];
  commentsSent: number[][] = [];
  /** The folder the system dialog "returns". */
  picked: string | null = FOLDER;
  /** What the engine says about a folder that is not the greeter repository. */
  folderState: FolderCheck["repo"]["state"] = { kind: "ready" };
  stopped: number[] = [];

  check(path: string): FolderCheck {
    const ready = this.folderState.kind === "ready" && path === FOLDER;
    const settings = { main_branch: "main", agent: "builtin" as const, verify: [{ name: "test", command: "npm run test" }] };
    return {
      repo: {
        path,
        state: ready ? { kind: "ready" } : this.folderState,
        message: ready ? "A git repository on branch main." : `${path} is not a git repository. Healer can make it one.`,
        main_branch: ready ? "main" : null,
        head: ready ? "abc1234" : null,
        notes: ready ? ["2 files have changes that on the main branch are not committed. Runs still work."] : [],
      },
      detection: ready
        ? {
            found: ["a Node project (package.json)"],
            verify: settings.verify,
            init_script: null,
            agents: [
              { kind: "builtin", name: "Healer's built-in agent", program: null, version: null, usable: true, message: "Works with the model tiers set in Settings." },
              { kind: "claude-code", name: "Claude Code", program: "/usr/bin/claude", version: "2.1.328", usable: true, message: "Installed, version 2.1.328." },
              { kind: "codex", name: "Codex", program: null, version: null, usable: false, message: "codex is not installed on this machine (not on PATH)." },
              { kind: "opencode", name: "opencode", program: "/usr/local/bin/opencode", version: "1.18.33", usable: true, message: "Installed, version 1.18.33." },
              { kind: "gemini-cli", name: "Gemini CLI", program: "/usr/local/bin/gemini", version: "0.61.0", usable: true, message: "Installed, version 0.61.0." },
            ],
          }
        : null,
      proposal: ready ? { path, name: "greeter", settings } : null,
      already_added: null,
    };
  }

  validate(input: ProjectInput): FieldProblem[] {
    const problems: FieldProblem[] = [];
    if (!input.name.trim()) problems.push({ field: "name", message: "Give the project a name" });
    if (input.settings.agent === "codex") {
      problems.push({ field: "agent", message: "Codex is not installed on this computer (no codex program was found)." });
    }
    if (input.settings.agent === "claude-code" && input.settings.agent_provider === "openai") {
      problems.push({ field: "agent_provider", message: "Claude Code speaks only Anthropic's API; choose an Anthropic provider" });
    }
    if ((input.settings.verify ?? []).length === 0 && !input.settings.commit_without_checks) {
      problems.push({ field: "verify", message: "Add a command that checks the agent's work (its tests, a type check), or choose to commit its work without checks" });
    }
    (input.settings.verify ?? []).forEach((v, i) => {
      if (!v.command.trim()) problems.push({ field: `verify.${i}`, message: "The command is empty; fill it in or remove the row" });
    });
    if (input.settings.runs_on?.kind === "cluster" && !this.clusterConnected()) {
      problems.push({
        field: "runs_on",
        message: "Its tasks cannot run on the cluster's workers: this Healer is not connected to one. Connect it first in Settings → More computers.",
      });
    }
    return problems;
  }

  summary(project: Project): ProjectSummary {
    const count = (s: ProjectTask["status"]) => this.tasks.filter((t) => t.status === s).length;
    return {
      project,
      columns: { open: count("open"), in_progress: count("in_progress"), blocked: count("blocked"), closed: count("closed") },
      ready: 0, problems: this.problems.length, running: 0, unreadable: null,
    };
  }

  detail(project: Project): ProjectDetail {
    const open = this.tasks.filter((t) => t.status === "open");
    return {
      project,
      repo: this.check(project.path).repo,
      tasks: this.tasks.map((t) => ({ task: t, ready: t.status === "open", waiting: null, waits_for: [] })),
      problems: this.problems,
      next: open[0]?.id ?? null,
      progress: this.progress,
      sessions: this.sessions.map((s) => s.session),
    };
  }

  session(id: number, taskId: string, status: SessionRecord["status"], steps: SessionStep[]): SessionDetail {
    const detail: SessionDetail = {
      session: {
        id, project_id: 1, task_id: taskId, task_title: this.tasks.find((t) => t.id === taskId)?.title ?? "", agent: "builtin", status,
        worktree: "/data/worktrees/1/t1", branch: `healer/${taskId}`, base_commit: null, pgid: null, agent_session_id: null,
        transcript: null, exit_code: null, summary: status === "running" ? "" : "Done: commit 1a2b3c4, merged into main",
        commit_id: status === "finished" ? "1a2b3c4d5e6f" : null, merged: status === "finished",
        started_at: new Date(Date.now() - 90_000).toISOString(), ended_at: status === "running" ? null : new Date().toISOString(),
        resumed_from: null,
        agent_version: null,
        raw_lines: 0,
      },
      project_name: "greeter",
      steps: steps.map((s, i) => ({ session_id: id, seq: i + 1, step: s })),
      model_use: null,
      questions: [],
    };
    this.sessions.unshift(detail);
    return detail;
  }

  review(sessionId: number): ChangeReview {
    return (
      this.reviews.get(sessionId) ?? { of: "nothing", commit: null, files: [], more_files: 0, worktree: null, session_id: sessionId || null }
    );
  }

  handle(cmd: string, args: Record<string, unknown>): (() => unknown) | undefined {
    const project = () => {
      const found = this.projects.find((p) => p.id === (args.id ?? args.projectId));
      if (!found) throw { code: "not_found", message: "project not found" };
      return found;
    };
    switch (cmd) {
      case "plugin:dialog|open":
        return () => this.picked;
      case "check_project_folder":
        return () => this.check(args.path as string);
      case "validate_project":
        return () => this.validate(args.input as ProjectInput);
      case "add_project":
        return () => {
          const input = args.input as ProjectInput;
          const added: Project = { id: this.projects.length + 1, name: input.name, path: input.path, settings: input.settings, created_at: "", updated_at: "" };
          this.projects.push(added);
          return added;
        };
      case "update_project":
        return () => {
          const input = args.input as ProjectInput;
          const problems = this.validate(input);
          if (problems.length > 0) throw { code: "invalid_input", message: problems.map((p) => `${p.field}: ${p.message}`).join("; ") };
          const found = project();
          found.settings = input.settings;
          return found;
        };
      case "list_projects":
        return () => this.projects.map((p) => this.summary(p));
      case "remove_project":
        return () => {
          this.projects = this.projects.filter((p) => p.id !== args.id);
          return null;
        };
      case "get_project":
        return () => this.detail(project());
      case "get_project_task":
        return () => {
          const found = this.tasks.find((t) => t.id === args.taskId);
          if (!found) throw { code: "not_found", message: "task not found" };
          return {
            project: project(),
            task: { task: found, ready: found.status === "open", waiting: null, waits_for: [] },
            sessions: this.sessions.filter((s) => s.session.task_id === found.id).map((s) => s.session),
            steering: this.steering.filter((e) => e.task_id === found.id),
            heals: this.heals.filter((h) => h.task_id === found.id),
            snapshots: this.snapshots.filter((h) => h.task_id === found.id),
            unaccepted: this.unaccepted,
            pull_request: this.pullRequest,
          };
        };
      case "accept_task":
        return () => {
          this.finished.push({ act: "accept", taskId: args.taskId as string, how: (args.how as AcceptHow | null) ?? null });
          return this.acceptance;
        };
      case "resolve_conflict":
        return () => {
          this.finished.push({ act: "resolve", taskId: args.taskId as string, how: (args.how as AcceptHow | null) ?? null });
          return this.session(90, args.taskId as string, "running", []).session;
        };
      case "set_project_token":
        return () => {
          this.hostToken = args.token as string;
          return null;
        };
      case "open_pull_request":
        return () => {
          this.pullRequestApis.push((args.apiUrl as string | null) ?? null);
          if (this.unknownHost && !args.apiUrl)
            throw { code: "invalid_input", message: "Healer cannot tell whether git.example.com runs GitHub, GitLab or Forgejo: give the address of its API, such as https://git.example.com/api/v4 for GitLab" };
          if (!this.hostToken) throw { code: "invalid_input", message: "Healer has no token for GitHub yet: give it one for \u201cgreeter\u201d (it is kept in your secrets, never in Healer's database)" };
          this.pullRequest = {
            project_id: 1, task_id: args.taskId as string, host: "github", api_url: "https://api.github.com/", number: 7,
            url: "https://github.com/ada/greeter/pull/7", state: "open", pushed_commit: "1a2b3c4d", created_at: "", updated_at: "",
            checks: "waiting", checks_said: "", next_check_at: null, healed_commit: null,
          };
          return this.pullRequest;
        };
      case "add_review_comment":
        return () => {
          if (!(args.text as string).trim()) throw { code: "invalid_input", message: "write what the agent should change" };
          const comment: ReviewComment = {
            id: this.comments.length + 1, project_id: args.projectId as number, task_id: args.taskId as string, path: args.path as string,
            line_start: args.lineStart as number, line_end: args.lineEnd as number, excerpt: "", blob: "", text: args.text as string,
            created_at: new Date().toISOString(), sent_at: null, sent_session_id: null, addressed_at: null,
          };
          this.comments.push(comment);
          return comment;
        };
      case "list_review_comments":
        return () => this.comments.filter((c) => c.project_id === args.projectId && c.task_id === args.taskId);
      case "delete_review_comment":
        return () => {
          this.comments = this.comments.filter((c) => c.id !== args.commentId || c.sent_at);
          return null;
        };
      case "send_review_comments":
        return () => {
          const waiting = this.comments.filter((c) => c.task_id === args.taskId && !c.sent_at);
          if (waiting.length === 0) throw { code: "invalid_input", message: "no comment waits to be sent" };
          for (const c of waiting) {
            c.sent_at = new Date().toISOString();
            c.sent_session_id = 8;
          }
          this.commentsSent.push(waiting.map((c) => c.id));
          return { count: waiting.length, session_id: 8, said: `Sent ${waiting.length === 1 ? "1 comment" : `${waiting.length} comments`} to the agent: it picks the task up again on its branch.` };
        };
      case "discard_task_work":
        return () => {
          this.finished.push({ act: "discard", taskId: args.taskId as string, how: null });
          this.unaccepted = null;
          return { snapshot_id: 3, said: "The work of \u201cGreet properly\u201d was discarded: its branch and folder are gone, and a snapshot keeps it if you want it back. The task is open again." };
        };
      case "list_approval_rules":
        return () => this.approvalRules.filter((r) => r.project_id === args.projectId);
      case "remove_approval_rule":
        return () => {
          this.approvalRules = this.approvalRules.filter((r) => r.id !== args.ruleId);
          return null;
        };
      case "get_healer_config":
        return () => this.healerConfig;
      case "set_healer_config":
        return () => {
          this.healerConfig = args.config as typeof this.healerConfig;
          return this.healerConfig;
        };
      case "restore_snapshot":
        return () => {
          const snap = this.snapshots.find((s) => s.id === args.id);
          if (!snap) throw { code: "not_found", message: "snapshot not found" };
          snap.restored_at = new Date().toISOString();
          return `Restored snapshot ${snap.id}`;
        };
      case "get_session":
        return () => this.sessions.find((s) => s.session.id === args.sessionId);
      case "set_project_task_status":
        return () => {
          const found = this.tasks.find((t) => t.id === args.taskId);
          if (!found) throw { code: "not_found", message: "task not found" };
          found.status = args.status as ProjectTask["status"];
          found.closed_reason = (args.reason as string | null) ?? undefined;
          return found;
        };
      case "move_project_task":
        return () => {
          const from = this.tasks.findIndex((t) => t.id === args.taskId);
          const [moved] = this.tasks.splice(from, 1);
          const before = this.tasks.findIndex((t) => t.id === args.before);
          if (before < 0) this.tasks.push(moved);
          else {
            moved.priority = this.tasks[before].priority;
            this.tasks.splice(before, 0, moved);
          }
          return moved;
        };
      case "review_session":
        return () => this.review(args.sessionId as number);
      case "review_task":
        return () => {
          const ofTask = this.sessions.filter((s) => s.session.task_id === args.taskId).map((s) => s.session);
          const chosen = ofTask.find((s) => s.status === "running") ?? ofTask.find((s) => s.commit_id) ?? ofTask[0];
          return chosen ? this.review(chosen.id) : this.review(0);
        };
      case "open_worktree":
        return () => {
          this.opened.push({ sessionId: args.sessionId as number, terminal: args.terminal as boolean });
          return null;
        };
      case "get_editor_command":
        return () => this.editorCommand;
      case "set_editor_command":
        return () => {
          this.editorCommand = (args.command as string).trim() || null;
          return null;
        };
      case "stop_session":
        return () => {
          this.stopped.push(args.sessionId as number);
          return null;
        };
      case "say_to_session":
        return () => {
          const session = this.sessions.find((s) => s.session.id === args.sessionId)?.session;
          if (!session || session.status !== "running") throw { code: "invalid_input", message: "the agent is not working now, so a message cannot reach it" };
          const entry = {
            id: this.steering.length + 100, project_id: session.project_id, task_id: session.task_id, session_id: session.id,
            at: new Date().toISOString(), kind: "message" as const, rule: null, message: args.text as string, evidence: [],
            detail: "You wrote the agent a message.", tokens: 0, action: null,
            delivery: { state: "waiting" as const, via: null, delivered_at: null },
          };
          this.steering.push(entry);
          return entry;
        };
      default:
        return undefined;
    }
  }
}
