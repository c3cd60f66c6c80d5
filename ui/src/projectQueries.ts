// Projects, their boards, tasks and the sessions agents run on them, kept fresh by engine
// events; a running session's steps arrive live and are appended to its cached detail.
import { keepPreviousData, useMutation, useQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { api } from "./api";
import type { AcceptHow, HealerConfig, ProjectInput, ProjectTaskEdit, ProjectTaskStatus, SessionDetail, StoredStep } from "./bindings";

export const projectKeys = {
  all: ["projects"] as const,
  list: ["projects", "list"] as const,
  detail: (id: number) => ["projects", "detail", id] as const,
  task: (projectId: number, taskId: string) => ["projects", "task", projectId, taskId] as const,
  session: (id: number) => ["session", id] as const,
  sessionReview: (id: number) => ["session", id, "review"] as const,
  taskReview: (projectId: number, taskId: string) => ["projects", "task", projectId, taskId, "review"] as const,
  editor: ["editor-command"] as const,
  folder: (path: string) => ["project-folder", path] as const,
  validation: (input: ProjectInput, id: number | null) => ["validate-project", input, id] as const,
  approvalRules: (id: number) => ["projects", "approval-rules", id] as const,
  comments: (projectId: number, taskId: string) => ["projects", "task", projectId, taskId, "comments"] as const,
};

/** How often a running session is looked at again, in case a live step was missed. */
const RUNNING_POLL_MS = 3000;

export function useProjects() {
  return useQuery({ queryKey: projectKeys.list, queryFn: api.listProjects });
}

export function useProject(id: number) {
  return useQuery({ queryKey: projectKeys.detail(id), queryFn: () => api.getProject(id) });
}

export function useProjectTask(projectId: number, taskId: string) {
  return useQuery({ queryKey: projectKeys.task(projectId, taskId), queryFn: () => api.getProjectTask(projectId, taskId) });
}

export function useSession(id: number | null) {
  return useQuery({
    queryKey: projectKeys.session(id ?? 0),
    queryFn: () => api.getSession(id ?? 0),
    enabled: id !== null,
    refetchInterval: (query) => (query.state.data?.session.status === "running" ? RUNNING_POLL_MS : false),
  });
}

export function useFolderCheck(path: string) {
  return useQuery({
    queryKey: projectKeys.folder(path),
    queryFn: () => api.checkProjectFolder(path),
    enabled: path.trim() !== "",
    staleTime: 0,
  });
}

export function useProjectValidation(input: ProjectInput | null, id: number | null) {
  return useQuery({
    queryKey: input ? projectKeys.validation(input, id) : ["validate-project", null],
    queryFn: () => (input ? api.validateProject(input, id) : Promise.resolve([])),
    enabled: input !== null,
    placeholderData: keepPreviousData,
    staleTime: 0,
  });
}

function refreshAll(queryClient: QueryClient) {
  return queryClient.invalidateQueries({ queryKey: projectKeys.all });
}

export function useInitFolder() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (path: string) => api.initProjectFolder(path),
    onSuccess: (check, path) => queryClient.setQueryData(projectKeys.folder(path), check),
  });
}

export function useAddProject() {
  const queryClient = useQueryClient();
  return useMutation({ mutationFn: (input: ProjectInput) => api.addProject(input), onSuccess: () => refreshAll(queryClient) });
}

export function useUpdateProject(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: ProjectInput) => api.updateProject(id, input),
    onSuccess: () => refreshAll(queryClient),
  });
}

export function useRemoveProject() {
  const queryClient = useQueryClient();
  return useMutation({ mutationFn: (id: number) => api.removeProject(id), onSuccess: () => refreshAll(queryClient) });
}

export function useAddTask(projectId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (edit: ProjectTaskEdit) => api.addProjectTask(projectId, edit),
    onSuccess: () => refreshAll(queryClient),
  });
}

export function useEditTask(projectId: number, taskId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (edit: ProjectTaskEdit) => api.editProjectTask(projectId, taskId, edit),
    onSuccess: () => refreshAll(queryClient),
  });
}

export function useMoveTask(projectId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ taskId, before }: { taskId: string; before: string | null }) => api.moveProjectTask(projectId, taskId, before),
    onSuccess: () => refreshAll(queryClient),
  });
}

export function useSetTaskStatus(projectId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ taskId, status, reason }: { taskId: string; status: ProjectTaskStatus; reason: string | null }) =>
      api.setProjectTaskStatus(projectId, taskId, status, reason),
    onSuccess: () => refreshAll(queryClient),
  });
}

export function useRunTask(projectId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (taskId: string | null) => api.runProjectTask(projectId, taskId),
    onSuccess: () => refreshAll(queryClient),
  });
}

export function useAcceptTask(projectId: number, taskId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (how: AcceptHow | null) => api.acceptTask(projectId, taskId, how),
    onSuccess: () => refreshAll(queryClient),
  });
}

export function useResolveConflict(projectId: number, taskId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (how: AcceptHow | null) => api.resolveConflict(projectId, taskId, how),
    onSuccess: () => refreshAll(queryClient),
  });
}

export function useOpenPullRequest(projectId: number, taskId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async ({ token, apiUrl }: { token: string | null; apiUrl: string | null }) => {
      if (token) await api.setProjectToken(projectId, token);
      return api.openPullRequest(projectId, taskId, apiUrl);
    },
    onSuccess: () => refreshAll(queryClient),
  });
}

export function useDiscardTaskWork(projectId: number, taskId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => api.discardTaskWork(projectId, taskId),
    onSuccess: () => refreshAll(queryClient),
  });
}

export function useRestoreSnapshot(projectId: number, taskId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => api.restoreSnapshot(id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: projectKeys.task(projectId, taskId) }),
  });
}

export function useHealerConfig(projectId: number) {
  return useQuery({ queryKey: ["healer-config", projectId], queryFn: () => api.getHealerConfig(projectId) });
}

export function useSaveHealerConfig(projectId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (config: HealerConfig) => api.setHealerConfig(projectId, config),
    onSuccess: (saved) => queryClient.setQueryData(["healer-config", projectId], saved),
  });
}

export function useStopSession() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (sessionId: number) => api.stopSession(sessionId),
    onSuccess: (_, sessionId) => queryClient.invalidateQueries({ queryKey: projectKeys.session(sessionId) }),
  });
}

/** Write the agent of a live session a message; the task's timeline then shows it waiting. */
export function useSayToSession() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ sessionId, text }: { sessionId: number; text: string }) => api.sayToSession(sessionId, text),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: projectKeys.all }),
  });
}

/** A live step: appended to the session's cached detail when it is the next one. */
export function appendLiveStep(queryClient: QueryClient, step: StoredStep) {
  queryClient.setQueryData<SessionDetail>(projectKeys.session(step.session_id), (detail) => {
    if (!detail) return detail;
    const last = detail.steps.length ? detail.steps[detail.steps.length - 1].seq : 0;
    if (step.seq <= last) return detail;
    if (step.seq > last + 1) {
      // A step was missed: read them all again.
      void queryClient.invalidateQueries({ queryKey: projectKeys.session(step.session_id) });
      return detail;
    }
    return { ...detail, steps: [...detail.steps, step] };
  });
}

/** What a session changed; looked at again while it works. */
export function useSessionReview(id: number, running: boolean) {
  return useQuery({
    queryKey: projectKeys.sessionReview(id),
    queryFn: () => api.reviewSession(id),
    refetchInterval: running ? RUNNING_POLL_MS : false,
  });
}

/** What a task's work changed (its running session, else its last commit). */
export function useTaskReview(projectId: number, taskId: string, running: boolean) {
  return useQuery({
    queryKey: projectKeys.taskReview(projectId, taskId),
    queryFn: () => api.reviewTask(projectId, taskId),
    refetchInterval: running ? RUNNING_POLL_MS : false,
  });
}

/** The person's comments on a task's lines; looked at again while its agent works. */
export function useReviewComments(projectId: number, taskId: string, running: boolean) {
  return useQuery({
    queryKey: projectKeys.comments(projectId, taskId),
    queryFn: () => api.listReviewComments(projectId, taskId),
    refetchInterval: running ? RUNNING_POLL_MS : false,
  });
}

export function useAddReviewComment(projectId: number, taskId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ path, from, to, text }: { path: string; from: number; to: number; text: string }) =>
      api.addReviewComment(projectId, taskId, path, from, to, text),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: projectKeys.comments(projectId, taskId) }),
  });
}

export function useDeleteReviewComment(projectId: number, taskId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (commentId: number) => api.deleteReviewComment(commentId),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: projectKeys.comments(projectId, taskId) }),
  });
}

export function useSendReviewComments(projectId: number, taskId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => api.sendReviewComments(projectId, taskId),
    onSuccess: () => refreshAll(queryClient),
  });
}

export function useOpenWorktree() {
  return useMutation({
    mutationFn: ({ sessionId, terminal }: { sessionId: number; terminal: boolean }) => api.openWorktree(sessionId, terminal),
  });
}

export function useEditorCommand() {
  return useQuery({ queryKey: projectKeys.editor, queryFn: api.getEditorCommand });
}

export function useSetEditorCommand() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (command: string) => api.setEditorCommand(command),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: projectKeys.editor }),
  });
}

export function useExportTrajectory() {
  return useMutation({ mutationFn: (sessionId: number) => api.exportSessionTrajectory(sessionId) });
}

/** What the person allowed for good in a project by answering its agent's questions. */
export function useApprovalRules(projectId: number | null) {
  return useQuery({
    queryKey: projectKeys.approvalRules(projectId ?? 0),
    queryFn: () => api.listApprovalRules(projectId ?? 0),
    enabled: projectId !== null,
  });
}

export function useRemoveApprovalRule(projectId: number) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (ruleId: number) => api.removeApprovalRule(projectId, ruleId),
    onSettled: () => client.invalidateQueries({ queryKey: projectKeys.approvalRules(projectId) }),
  });
}
