// The model tasks a person can watch: a workflow's auto-fixes and its chat with the planner.
import { useMutation, useQuery, useQueryClient, type Query } from "@tanstack/react-query";
import { api } from "./api";
import type { AutoFix, PlannerChat } from "./bindings";

export const taskKeys = {
  autofixes: (workflowId: number) => ["autofixes", workflowId] as const,
  autofix: (taskId: number) => ["autofix", taskId] as const,
  chat: (workflowId: number) => ["planner-chat", workflowId] as const,
};

/** How often a busy chat is looked at again, in case its turn ended without a word (Healer stopped). */
const BUSY_CHAT_POLL_MS = 3000;

export function useAutofixes(workflowId: number) {
  return useQuery({ queryKey: taskKeys.autofixes(workflowId), queryFn: () => api.listAutofixes(workflowId) });
}

export function useAutofix(taskId: number) {
  return useQuery({ queryKey: taskKeys.autofix(taskId), queryFn: () => api.getAutofix(taskId) });
}

export function usePlannerChat(workflowId: number) {
  return useQuery({
    queryKey: taskKeys.chat(workflowId),
    queryFn: () => api.getPlannerChat(workflowId),
    refetchInterval: (query) => (query.state.data?.busy ? BUSY_CHAT_POLL_MS : false),
  });
}

export function useSendPlannerMessage(workflowId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (message: string) => api.sendPlannerMessage(workflowId, message),
    // The chat is busy now, and has a task to follow if this was its first message.
    onSuccess: () => queryClient.invalidateQueries({ queryKey: taskKeys.chat(workflowId) }),
  });
}

/**
 * Whether a cached answer shows task `taskId`. Thread events name only the task, so the lists
 * and chats that hold it are found by what they hold.
 */
export function showsTask(query: Query, taskId: number): boolean {
  const [kind] = query.queryKey;
  if (kind === "autofixes") return (query.state.data as AutoFix[] | undefined)?.some((f) => f.task_id === taskId) ?? false;
  if (kind === "planner-chat") return (query.state.data as PlannerChat | undefined)?.task_id === taskId;
  return false;
}
