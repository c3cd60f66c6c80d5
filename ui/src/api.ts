// The one place that talks to the generated bindings. Commands come back as a Result; here they
// become plain data or a thrown ApiError, which is what TanStack Query expects.
import {
  commands,
  type AcceptHow,
  type Budgets,
  type ClusterSettings,
  type ErrorCode,
  type ErrorPayload,
  type HealerConfig,
  type OutputStream,
  type ProjectInput,
  type ProjectTaskEdit,
  type ProjectTaskStatus,
  type ProviderInput,
  type RunsOn,
  type SavedView,
  type SteeringModelSetting,
  type SteeringSettings,
  type Runtime,
  type Schedule,
  type Tier,
  type TierSetting,
  type Version,
  type WorkflowInput,
} from "./bindings";

/** What every generated command resolves to (tauri-specta's Result error mode). */
type Result<T> = { status: "ok"; data: T } | { status: "error"; error: ErrorPayload };

export class ApiError extends Error {
  readonly code: ErrorCode;

  constructor({ code, message }: ErrorPayload) {
    super(asSentence(message));
    this.name = "ApiError";
    this.code = code;
  }
}

/** Engine messages are written to follow "healer: " on a terminal; on screen they are sentences. */
export function asSentence(message: string): string {
  const text = message.trim();
  if (!text) return text;
  const capitalised = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(capitalised) ? capitalised : `${capitalised}.`;
}

/** Any thrown value as an ApiError, so screens can switch on `code` alone. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof Error) return new ApiError({ code: "internal", message: error.message });
  // The engine's own error as data (a connection test's answer): its sentence, never
  // "[object Object]".
  if (typeof error === "object" && error !== null && typeof (error as { message?: unknown }).message === "string") {
    const { code, message } = error as { code?: unknown; message: string };
    return new ApiError({ code: typeof code === "string" ? (code as ErrorCode) : "internal", message });
  }
  if (typeof error === "string") return new ApiError({ code: "internal", message: error });
  return new ApiError({ code: "internal", message: "Something went wrong that Healer could not put into words; the log has the details" });
}

async function unwrap<T>(call: Promise<Result<T>>): Promise<T> {
  let result: Result<T>;
  try {
    result = await call;
  } catch (error) {
    // The bindings rethrow transport failures (e.g. an unknown command) as plain Errors.
    throw toApiError(error);
  }
  if (result.status === "error") {
    // Tauri itself refuses with a plain string (a command the window may not call).
    const error = result.error as ErrorPayload | string;
    throw new ApiError(typeof error === "string" ? { code: "internal", message: error } : error);
  }
  return result.data;
}

export const api = {
  appInfo: () => unwrap(commands.appInfo()),
  listEvents: (before: number | null, limit: number) => unwrap(commands.listEvents(before, limit)),
  listNotifications: () => unwrap(commands.listNotifications()),
  /** An empty list marks every notification read. */
  markNotificationsRead: (ids: number[]) => unwrap(commands.markNotificationsRead(ids)),
  sendTestAlert: () => unwrap(commands.sendTestAlert()),
  openLogFolder: () => unwrap(commands.openLogFolder()),

  listWorkflows: () => unwrap(commands.listWorkflows()),
  getWorkflow: (id: number) => unwrap(commands.getWorkflow(id)),
  /** The problems that would stop `input` being saved; empty when it can be. */
  validateWorkflow: (input: WorkflowInput) => unwrap(commands.validateWorkflow(input)),
  previewSchedule: (schedule: Schedule) => commands.previewSchedule(schedule),
  /** `requirements`: the packages its first version declares (the ones the person confirmed). */
  createWorkflow: (input: WorkflowInput, requirements: string[] = []) =>
    unwrap(commands.createWorkflow(input, requirements)),
  /** Settings only: `input.code` is ignored. */
  updateWorkflow: (id: number, input: WorkflowInput) => unwrap(commands.updateWorkflow(id, input)),
  /**
   * Saves the code as the next major version, unless the syntax check refuses it (`invalid`) or
   * a newer version than `base`, the one the editor opened, appeared meanwhile (`conflict`).
   * `requirements`: the packages the new version declares; null keeps those of the one that runs.
   */
  saveScript: (id: number, code: string, comment: string, base: Version | null, requirements: string[] | null = null) =>
    unwrap(commands.saveScript(id, code, comment, base, requirements)),
  /** The runtime's own syntax check; null when the code passes. */
  checkScript: (id: number, code: string) => unwrap(commands.checkScript(id, code)),
  /** An earlier version's code becomes the next major ("Restored from 1.0"). */
  restoreVersion: (id: number, version: Version) => unwrap(commands.restoreVersion(id, version)),
  dismissNotification: (id: number) => unwrap(commands.dismissNotification(id)),
  /** Whether the first-run model setup was skipped or finished in this data folder. */
  setupSkipped: () => unwrap(commands.setupSkipped()),
  skipSetup: () => unwrap(commands.skipSetup()),
  /** Copies an attempt's whole output into the Downloads folder; the path it went to. */
  exportFullLog: (runId: number, attempt: number, stream: OutputStream) =>
    unwrap(commands.exportFullLog(runId, attempt, stream)),
  setWorkflowPaused: (id: number, paused: boolean) => unwrap(commands.setWorkflowPaused(id, paused)),
  deleteWorkflow: (id: number) => unwrap(commands.deleteWorkflow(id)),
  /** The new run's id; fails with `invalid_input` while a run is open. */
  runWorkflowNow: (id: number) => unwrap(commands.runWorkflowNow(id)),
  /** Newest first. */
  listRuns: (workflowId: number, before: number | null, limit: number) =>
    unwrap(commands.listRuns(workflowId, before, limit)),
  getRun: (runId: number) => unwrap(commands.getRun(runId)),
  /** Oldest first. */
  listVersions: (workflowId: number) => unwrap(commands.listVersions(workflowId)),
  loadExamples: () => unwrap(commands.loadExamples()),

  /** Each provider with where its key comes from (keyring, environment, none). */
  listProviders: () => unwrap(commands.listProviders()),
  /** Adds the provider, or changes the one with that name. */
  saveProvider: (input: ProviderInput) => unwrap(commands.saveProvider(input)),
  /** Also unmaps its tiers and forgets its key. */
  removeProvider: (name: string) => unwrap(commands.removeProvider(name)),
  /** The key goes to the OS keyring and nowhere else; it is never read back. */
  setProviderKey: (name: string, key: string) => unwrap(commands.setProviderKey(name, key)),
  forgetProviderKey: (name: string) => unwrap(commands.forgetProviderKey(name)),
  /** Whether a keyring service answers here, and whether Healer's own secrets file was chosen. */
  keepStatus: () => unwrap(commands.keepStatus()),
  chooseSecretsFile: () => unwrap(commands.chooseSecretsFile()),
  listWorkflowSecrets: (workflowId: number) => unwrap(commands.listWorkflowSecrets(workflowId)),
  /** The value is kept with the provider keys and never read back. */
  setWorkflowSecret: (workflowId: number, name: string, value: string) =>
    unwrap(commands.setWorkflowSecret(workflowId, name, value)),
  removeWorkflowSecret: (workflowId: number, name: string) => unwrap(commands.removeWorkflowSecret(workflowId, name)),
  /** Resolves (with `ok: false`) when the provider answers with an error: that error is the result. */
  testProvider: (name: string) => unwrap(commands.testProvider(name)),
  detectOllama: () => unwrap(commands.detectOllama()),
  detectLlamaCpp: () => unwrap(commands.detectLlamaCpp()),
  listTiers: () => unwrap(commands.listTiers()),
  setTier: (setting: TierSetting) => unwrap(commands.setTier(setting)),
  clearTier: (tier: Tier) => unwrap(commands.clearTier(tier)),
  getBudgets: () => unwrap(commands.getBudgets()),
  setBudgets: (budgets: Budgets) => unwrap(commands.setBudgets(budgets)),
  usageToday: () => unwrap(commands.usageToday()),
  /** The steering model: what is named, what steering asks now, and the rule. */
  getSteeringModel: () => unwrap(commands.getSteeringModel()),
  /** Name the steering model, or (null) leave the choice to the rule. */
  setSteeringModel: (setting: SteeringModelSetting | null) => unwrap(commands.setSteeringModel(setting)),
  getSteeringSettings: () => unwrap(commands.getSteeringSettings()),
  /** Every live session: Healer's, and the person's own when they are watched. */
  listLiveSessions: () => unwrap(commands.listLiveSessions()),
  setSteeringSettings: (settings: SteeringSettings) => unwrap(commands.setSteeringSettings(settings)),

  /** A workflow's auto-fix tasks, newest first. */
  listAutofixes: (workflowId: number) => unwrap(commands.listAutofixes(workflowId)),
  /** One auto-fix with its whole thread, and the code before and after. */
  getAutofix: (taskId: number) => unwrap(commands.getAutofix(taskId)),
  getPlannerChat: (workflowId: number) => unwrap(commands.getPlannerChat(workflowId)),
  /** Queues the planner's turn; its answer arrives later, through events. */
  sendPlannerMessage: (workflowId: number, message: string) => unwrap(commands.sendPlannerMessage(workflowId, message)),

  /** "Try auto-fix again" after a repair gave up: a new repair of the last failure. */
  retryAutofix: (workflowId: number) => unwrap(commands.retryAutofix(workflowId)),

  /** Pending checkpoints (oldest first) and past decisions (newest first). */
  listCheckpoints: () => unwrap(commands.listCheckpoints()),
  /** `option` is 1-based, as shown; fails with `invalid_input` when it was decided already. */
  decideCheckpoint: (id: number, option: number, notes: string | null) =>
    unwrap(commands.decideCheckpoint(id, option, notes)),

  /** Error signatures Healer remembers, most recently seen first. */
  listPatterns: () => unwrap(commands.listPatterns()),
  /** One signature with every fix tried for it (newest first); `not_found` when it is not known. */
  getPattern: (signature: string) => unwrap(commands.getPattern(signature)),
  /** Decisions Healer made on its own (rollbacks, breakers), newest first. */
  listDecisions: () => unwrap(commands.listDecisions()),
  /** Why a safety breaker paused scheduled runs; null while they run as usual. */
  getSchedulerPause: () => unwrap(commands.getSchedulerPause()),
  resumeScheduler: () => unwrap(commands.resumeScheduler()),

  /** Whether closing the window keeps Healer in the tray, and whether it starts at login. */
  getDesktopSettings: () => unwrap(commands.getDesktopSettings()),
  setKeepRunning: (on: boolean) => unwrap(commands.setKeepRunning(on)),
  setStartAtLogin: (on: boolean) => unwrap(commands.setStartAtLogin(on)),
  /** Where the person is, so a window made after a close opens there. */
  rememberView: (view: SavedView) => toApi(commands.rememberView(view)),
  /** Where the previous window was; null for a first window. Asked once. */
  restoredView: () => toApi(commands.restoredView()),
  /** Quits Healer through its normal shutdown. */
  quitApp: () => toApi(commands.quitApp()),
  /** What the active version declares, what is installed (the lock) and the last install's log. */
  getDependencies: (id: number) => unwrap(commands.getDependencies(id)),
  /** Installs the active version's packages again, into a fresh environment. */
  reinstallDependencies: (id: number) => unwrap(commands.reinstallDependencies(id)),
  /** The packages `code` imports that the workflow lacks (`id` null: a workflow being created). */
  proposePackages: (runtime: Runtime, code: string, id: number | null) =>
    unwrap(commands.proposePackages(runtime, code, id)),
  /** Packages installed for an error signature, newest first. */
  listPackageFixes: (signature: string) => unwrap(commands.listPackageFixes(signature)),
  /** What a folder is (a repository? bare? …) and the project Healer proposes for it. */
  checkProjectFolder: (path: string) => unwrap(commands.checkProjectFolder(path)),
  /** git init and a first commit, then the folder looked at again. */
  initProjectFolder: (path: string) => unwrap(commands.initProjectFolder(path)),
  validateProject: (input: ProjectInput, id: number | null) => unwrap(commands.validateProject(input, id)),
  addProject: (input: ProjectInput) => unwrap(commands.addProject(input)),
  updateProject: (id: number, input: ProjectInput) => unwrap(commands.updateProject(id, input)),
  removeProject: (id: number) => unwrap(commands.removeProject(id)),
  sayToSession: (sessionId: number, text: string) => unwrap(commands.sayToSession(sessionId, text)),
  listPastSessions: () => unwrap(commands.listPastSessions()),
  listProjects: () => unwrap(commands.listProjects()),
  getProject: (id: number) => unwrap(commands.getProject(id)),
  getProjectTask: (projectId: number, taskId: string) => unwrap(commands.getProjectTask(projectId, taskId)),
  addProjectTask: (projectId: number, edit: ProjectTaskEdit) => unwrap(commands.addProjectTask(projectId, edit)),
  editProjectTask: (projectId: number, taskId: string, edit: ProjectTaskEdit) =>
    unwrap(commands.editProjectTask(projectId, taskId, edit)),
  /** Before `before` (taking its priority), or last of its column. */
  moveProjectTask: (projectId: number, taskId: string, before: string | null) =>
    unwrap(commands.moveProjectTask(projectId, taskId, before)),
  setProjectTaskStatus: (projectId: number, taskId: string, status: ProjectTaskStatus, reason: string | null) =>
    unwrap(commands.setProjectTaskStatus(projectId, taskId, status, reason)),
  /** Starts the agent (on the next ready task without `taskId`); its steps arrive as events. */
  runProjectTask: (projectId: number, taskId: string | null) => unwrap(commands.runProjectTask(projectId, taskId)),
  stopSession: (sessionId: number) => unwrap(commands.stopSession(sessionId)),
  getSession: (sessionId: number) => unwrap(commands.getSession(sessionId)),
  reviewSession: (sessionId: number) => unwrap(commands.reviewSession(sessionId)),
  /** Writes the session's steps as an ATIF file, shows it in the file manager, and says where. */
  exportSessionTrajectory: (sessionId: number) => unwrap(commands.exportSessionTrajectory(sessionId)),
  listOwnPastSessions: () => unwrap(commands.listOwnPastSessions()),
  reviewTask: (projectId: number, taskId: string) => unwrap(commands.reviewTask(projectId, taskId)),
  /** Opens the session's working copy in the person's editor (or the desktop's default), or a terminal there. */
  openWorktree: (sessionId: number, terminal: boolean) => unwrap(commands.openWorktree(sessionId, terminal)),
  getEditorCommand: () => unwrap(commands.getEditorCommand()),
  setEditorCommand: (command: string) => unwrap(commands.setEditorCommand(command)),
  getHealerConfig: (projectId: number) => unwrap(commands.getHealerConfig(projectId)),
  setHealerConfig: (projectId: number, config: HealerConfig) => unwrap(commands.setHealerConfig(projectId, config)),
  restoreSnapshot: (id: number) => unwrap(commands.restoreSnapshot(id)),
  /** Accepts a task's work into the main branch; what it came to (accepted, a conflict, a failed check, left). */
  acceptTask: (projectId: number, taskId: string, how: AcceptHow | null) => unwrap(commands.acceptTask(projectId, taskId, how)),
  /** Starts the agent on resolving a conflict with the main branch; accepted once green. */
  resolveConflict: (projectId: number, taskId: string, how: AcceptHow | null) =>
    unwrap(commands.resolveConflict(projectId, taskId, how)),
  discardTaskWork: (projectId: number, taskId: string) => unwrap(commands.discardTaskWork(projectId, taskId)),
  addReviewComment: (projectId: number, taskId: string, path: string, lineStart: number, lineEnd: number, text: string) =>
    unwrap(commands.addReviewComment(projectId, taskId, path, lineStart, lineEnd, text)),
  listReviewComments: (projectId: number, taskId: string) => unwrap(commands.listReviewComments(projectId, taskId)),
  deleteReviewComment: (commentId: number) => unwrap(commands.deleteReviewComment(commentId)),
  sendReviewComments: (projectId: number, taskId: string) => unwrap(commands.sendReviewComments(projectId, taskId)),
  /** Pushes the task's branch (with the person's own git sign-in) and opens its pull request. */
  openPullRequest: (projectId: number, taskId: string, apiUrl: string | null = null) =>
    unwrap(commands.openPullRequest(projectId, taskId, apiUrl)),
  /** Keeps the host token of a project's pull requests in the secrets keep. */
  setProjectToken: (projectId: number, token: string) => unwrap(commands.setProjectToken(projectId, token)),
  listApprovalRules: (projectId: number) => unwrap(commands.listApprovalRules(projectId)),
  removeApprovalRule: (projectId: number, ruleId: number) => unwrap(commands.removeApprovalRule(projectId, ruleId)),
  // Other computers (a Temporal cluster)
  /** Whether the cluster answers and the workers polling each queue in use (never throws for an unreachable cluster: `problem` says why). */
  clusterStatus: () => unwrap(commands.clusterStatus()),
  /** Asks the cluster without saving anything; throws the engine's sentence when it does not answer. */
  testCluster: (settings: ClusterSettings) => unwrap(commands.testCluster(settings)),
  /** Saved only when the cluster answers. */
  connectCluster: (settings: ClusterSettings) => unwrap(commands.connectCluster(settings)),
  /** Every workflow back on this computer; the titles of those brought back. */
  disconnectCluster: () => unwrap(commands.disconnectCluster()),
  getRunsOn: (workflowId: number) => unwrap(commands.getRunsOn(workflowId)),
  setRunsOn: (workflowId: number, runsOn: RunsOn) => unwrap(commands.setRunsOn(workflowId, runsOn)),
  /** Stops a run in progress on the cluster. */
  stopRun: (runId: number) => unwrap(commands.stopRun(runId)),
  /** Saves the key workers need in the Downloads folder; the file's path. */
  exportClusterKey: (path: string | null) => unwrap(commands.exportClusterKey(path)),
  /** Where workers reach the model gateway for agent sessions, and the workers that may. */
  workerGateway: () => unwrap(commands.workerGateway()),
  openGatewayToWorkers: (listen: string) => unwrap(commands.openGatewayToWorkers(listen)),
  /** A new token for a worker: shown once, only its hash is kept. */
  makeWorkerToken: (name: string) => unwrap(commands.makeWorkerToken(name)),
  forgetWorkerToken: (name: string) => unwrap(commands.forgetWorkerToken(name)),
};

/** A command that cannot fail on its own: only transport errors become ApiErrors. */
async function toApi<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    throw toApiError(error);
  }
}
