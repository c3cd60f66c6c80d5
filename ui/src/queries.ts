import {
  keepPreviousData,
  queryOptions,
  skipToken,
  useInfiniteQuery,
  useMutation,
  useQuery,
  useQueryClient,
  type QueryClient,
} from "@tanstack/react-query";
import { api } from "./api";
import { appendOlderEvents } from "./eventList";
import type {
  Budgets,
  ConnectionTest,
  EventRecord,
  FieldProblem,
  NotificationList,
  OutputStream,
  ProviderInput,
  Run,
  RunStatus,
  Runtime,
  Schedule,
  SteeringModelSetting,
  SteeringSettings,
  Tier,
  TierSetting,
  Version,
  WorkflowInput,
} from "./bindings";

export const queryKeys = {
  appInfo: ["app-info"],
  events: ["events"],
  notifications: ["notifications"],
} as const;

/** How many events the Activity page loads at first. */
export const EVENT_PAGE_SIZE = 100;

export function useAppInfo() {
  // Nothing in AppInfo changes while the app runs.
  return useQuery({ queryKey: queryKeys.appInfo, queryFn: api.appInfo, staleTime: Infinity });
}

export function useEvents() {
  return useQuery({
    queryKey: queryKeys.events,
    queryFn: () => api.listEvents(null, EVENT_PAGE_SIZE),
  });
}

/**
 * The page of events older than `before`, added to the end of the Activity list. `done`
 * says the store has no more.
 */
export function useOlderEvents() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (before: number) => api.listEvents(before, EVENT_PAGE_SIZE),
    onSuccess: (page) =>
      queryClient.setQueryData<EventRecord[]>(queryKeys.events, (known) => (known ? appendOlderEvents(known, page) : known)),
  });
}

export function useNotifications() {
  return useQuery({ queryKey: queryKeys.notifications, queryFn: api.listNotifications });
}

/** `[]` marks everything read. */
export function useMarkNotificationsRead() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (ids: number[]) => api.markNotificationsRead(ids),
    // Show the change at once so the badge and the highlight don't lag behind the click.
    onMutate: async (ids) => {
      await queryClient.cancelQueries({ queryKey: queryKeys.notifications });
      queryClient.setQueryData<NotificationList>(queryKeys.notifications, (list) =>
        list ? markRead(list, ids) : list,
      );
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: queryKeys.notifications }),
  });
}

function markRead(list: NotificationList, ids: number[]): NotificationList {
  const all = ids.length === 0;
  const items = list.items.map((n) => (all || ids.includes(n.id) ? { ...n, read: true } : n));
  return { items, unread: items.filter((n) => !n.read).length };
}

/** "Try auto-fix again": the repair starts at once; its events refresh what shows it. */
export function useRetryAutofix() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (workflowId: number) => api.retryAutofix(workflowId),
    onSettled: () => queryClient.invalidateQueries({ queryKey: queryKeys.notifications }),
  });
}

export function useSendTestAlert() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: api.sendTestAlert,
    onSettled: () => queryClient.invalidateQueries({ queryKey: queryKeys.notifications }),
  });
}

export function useOpenLogFolder() {
  return useMutation({ mutationFn: api.openLogFolder });
}

// Workflows

export const workflowKeys = {
  list: ["workflows"] as const,
  detail: (id: number) => ["workflow", id] as const,
  runs: (workflowId: number) => ["runs", workflowId] as const,
  run: (runId: number) => ["run", runId] as const,
  versions: (workflowId: number) => ["versions", workflowId] as const,
  dependencies: (workflowId: number) => ["dependencies", workflowId] as const,
  validation: (input: WorkflowInput, shownFields: string[]) => ["validate-workflow", input, shownFields] as const,
};

/** How many runs the Runs tab loads at a time. */
export const RUN_PAGE_SIZE = 20;

/** How often an open run is looked at again, to catch an attempt that starts after a retry wait. */
const OPEN_RUN_POLL_MS = 2000;

export function isOpenRun(status: RunStatus): boolean {
  return status === "queued" || status === "running";
}

export function useWorkflows() {
  return useQuery({ queryKey: workflowKeys.list, queryFn: api.listWorkflows });
}

export function useWorkflow(id: number) {
  return useQuery({ queryKey: workflowKeys.detail(id), queryFn: () => api.getWorkflow(id) });
}

export function useRuns(workflowId: number) {
  return useInfiniteQuery({
    queryKey: workflowKeys.runs(workflowId),
    queryFn: ({ pageParam }) => api.listRuns(workflowId, pageParam, RUN_PAGE_SIZE),
    initialPageParam: null as number | null,
    getNextPageParam: (last: Run[]) => (last.length < RUN_PAGE_SIZE ? undefined : last[last.length - 1].id),
  });
}

export function useRun(runId: number) {
  return useQuery({
    queryKey: workflowKeys.run(runId),
    queryFn: () => api.getRun(runId),
    refetchInterval: (query) => {
      const status = query.state.data?.run.status;
      return status && isOpenRun(status) ? OPEN_RUN_POLL_MS : false;
    },
  });
}

export function useVersions(workflowId: number) {
  return useQuery({ queryKey: workflowKeys.versions(workflowId), queryFn: () => api.listVersions(workflowId) });
}

/**
 * The engine's problems with a workflow, and the fields whose problems are shown. The two travel
 * together so that a message never appears under a field before its latest value was checked.
 */
export type Validation = { problems: FieldProblem[]; shownFields: string[] };

export function validationQuery(input: WorkflowInput, shownFields: string[]) {
  return queryOptions({
    queryKey: workflowKeys.validation(input, shownFields),
    queryFn: async (): Promise<Validation> => ({ problems: await api.validateWorkflow(input), shownFields }),
    staleTime: 0,
    gcTime: 30_000,
  });
}

export function useValidation(input: WorkflowInput, shownFields: string[]) {
  return useQuery({
    ...validationQuery(input, shownFields),
    // Keep the last answer on screen while the next one is asked, so messages don't flicker.
    placeholderData: keepPreviousData,
  });
}

/** What a schedule means and when it next runs, asked as it is typed. */
export function useSchedulePreview(schedule: Schedule) {
  return useQuery({
    queryKey: ["schedule-preview", schedule] as const,
    queryFn: () => api.previewSchedule(schedule),
    staleTime: 30_000,
    placeholderData: keepPreviousData,
  });
}

/** Everything shown about one workflow, asked again after it changed. */
function refreshWorkflow(queryClient: QueryClient, id: number) {
  void queryClient.invalidateQueries({ queryKey: workflowKeys.list });
  void queryClient.invalidateQueries({ queryKey: workflowKeys.detail(id) });
}

export function useLoadExamples() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: api.loadExamples,
    onSettled: () => queryClient.invalidateQueries({ queryKey: workflowKeys.list }),
  });
}

export function useCreateWorkflow() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ input, requirements }: { input: WorkflowInput; requirements: string[] }) =>
      api.createWorkflow(input, requirements),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: workflowKeys.list }),
  });
}

export function useUpdateWorkflow(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: WorkflowInput) => api.updateWorkflow(id, input),
    onSuccess: () => refreshWorkflow(queryClient, id),
  });
}

export function useSaveScript(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({
      code,
      comment,
      base,
      requirements = null,
    }: {
      code: string;
      comment: string;
      base: Version | null;
      requirements?: string[] | null;
    }) => api.saveScript(id, code, comment, base, requirements),
    onSuccess: async () => {
      refreshWorkflow(queryClient, id);
      void queryClient.invalidateQueries({ queryKey: workflowKeys.dependencies(id) });
      // The Versions tab shows the new version next, so have it before saying "saved".
      await queryClient.invalidateQueries({ queryKey: workflowKeys.versions(id) });
    },
  });
}

/** How long the editor waits after the last key before the syntax check runs. */
export const SYNTAX_CHECK_DELAY_MS = 600;

/** The runtime's syntax check of `code` (null: passes); skipped while `code` is null. */
export function useSyntaxCheck(id: number, code: string | null) {
  return useQuery({
    queryKey: ["syntax-check", id, code],
    queryFn: code === null ? skipToken : () => api.checkScript(id, code),
    staleTime: Infinity,
    gcTime: 60_000,
    placeholderData: keepPreviousData,
  });
}

/** The packages `code` imports that the workflow's environment lacks; skipped while `code` is null. */
export function useProposedPackages(runtime: Runtime, code: string | null, id: number | null) {
  return useQuery({
    queryKey: ["proposed-packages", runtime, id, code],
    queryFn: code === null ? skipToken : () => api.proposePackages(runtime, code, id),
    staleTime: 30_000,
    gcTime: 60_000,
    placeholderData: keepPreviousData,
  });
}

export function useDependencies(id: number) {
  return useQuery({ queryKey: workflowKeys.dependencies(id), queryFn: () => api.getDependencies(id) });
}

export function useReinstallDependencies(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => api.reinstallDependencies(id),
    onSuccess: (deps) => queryClient.setQueryData(workflowKeys.dependencies(id), deps),
  });
}

export function useRestoreVersion(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (version: Version) => api.restoreVersion(id, version),
    onSuccess: async () => {
      refreshWorkflow(queryClient, id);
      await queryClient.invalidateQueries({ queryKey: workflowKeys.versions(id) });
    },
  });
}

/** Copies an attempt's whole output into the Downloads folder; resolves to where it went. */
export function useExportFullLog() {
  return useMutation({
    mutationFn: ({ runId, attempt, stream }: { runId: number; attempt: number; stream: OutputStream }) =>
      api.exportFullLog(runId, attempt, stream),
  });
}

const setupKey = ["setup-skipped"] as const;

/** Whether the person skipped (or finished) the first-run setup: then it is no longer offered. */
export function useSetupSkipped() {
  return useQuery({ queryKey: setupKey, queryFn: api.setupSkipped });
}

export function useSkipSetup() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: api.skipSetup,
    onMutate: () => queryClient.setQueryData(setupKey, true),
    onSettled: () => queryClient.invalidateQueries({ queryKey: setupKey }),
  });
}

export function useDismissNotification() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => api.dismissNotification(id),
    onMutate: async (id) => {
      await queryClient.cancelQueries({ queryKey: queryKeys.notifications });
      queryClient.setQueryData<NotificationList>(queryKeys.notifications, (list) =>
        list ? { items: list.items.filter((n) => n.id !== id), unread: list.items.filter((n) => n.id !== id && !n.read).length } : list,
      );
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: queryKeys.notifications }),
  });
}

export function useSetPaused(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (paused: boolean) => api.setWorkflowPaused(id, paused),
    onSettled: () => refreshWorkflow(queryClient, id),
  });
}

export function useDeleteWorkflow(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => api.deleteWorkflow(id),
    onSuccess: () => {
      for (const queryKey of [workflowKeys.detail(id), workflowKeys.runs(id), workflowKeys.versions(id)]) {
        queryClient.removeQueries({ queryKey });
      }
      return queryClient.invalidateQueries({ queryKey: workflowKeys.list });
    },
  });
}

export function useRunNow(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => api.runWorkflowNow(id),
    onSettled: () => {
      refreshWorkflow(queryClient, id);
      return queryClient.invalidateQueries({ queryKey: workflowKeys.runs(id) });
    },
  });
}

// Models

export const modelKeys = {
  providers: ["providers"] as const,
  tiers: ["tiers"] as const,
  budgets: ["budgets"] as const,
  usage: ["usage-today"] as const,
  ollama: ["ollama"] as const,
  llamaCpp: ["llama-cpp"] as const,
  /** Under the tiers' key: a change of tiers or providers changes what steering would ask. */
  steeringModel: ["tiers", "steering-model"] as const,
  steeringSettings: ["steering-settings"] as const,
  keep: ["keep-status"] as const,
  workflowSecrets: (workflowId: number) => ["workflow-secrets", workflowId] as const,
  /** The models a provider listed at its last successful connection test. Only ever set, never fetched. */
  models: (provider: string) => ["provider-models", provider] as const,
};

/** Today's usage moves while tasks run; look again now and then so a day's end shows too. */
const USAGE_POLL_MS = 60_000;

/** A probe of 127.0.0.1 is cheap, but switching tabs should not repeat it every time. */
const OLLAMA_STALE_MS = 30_000;

export function useProviders() {
  return useQuery({ queryKey: modelKeys.providers, queryFn: api.listProviders });
}

export function useTiers() {
  return useQuery({ queryKey: modelKeys.tiers, queryFn: api.listTiers });
}

export function useBudgets() {
  return useQuery({ queryKey: modelKeys.budgets, queryFn: api.getBudgets });
}

export function useUsageToday() {
  return useQuery({ queryKey: modelKeys.usage, queryFn: api.usageToday, refetchInterval: USAGE_POLL_MS });
}

/** Looks for a local Ollama; `refetch` looks again. */
export function useOllama() {
  return useQuery({ queryKey: modelKeys.ollama, queryFn: api.detectOllama, staleTime: OLLAMA_STALE_MS });
}

/** Looks for a local llama.cpp server; `refetch` looks again. */
export function useLlamaCpp() {
  return useQuery({ queryKey: modelKeys.llamaCpp, queryFn: api.detectLlamaCpp, staleTime: OLLAMA_STALE_MS });
}

/** What the provider listed when it was last tested successfully (undefined: not yet). */
export function useKnownModels(provider: string) {
  return useQuery<string[]>({ queryKey: modelKeys.models(provider), queryFn: skipToken, staleTime: Infinity, gcTime: Infinity });
}

/** Providers, and the tiers whose resolution names them. */
function refreshProviders(queryClient: QueryClient) {
  void queryClient.invalidateQueries({ queryKey: modelKeys.providers });
  return queryClient.invalidateQueries({ queryKey: modelKeys.tiers });
}

export function useSaveProvider() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: ProviderInput) => api.saveProvider(input),
    onSuccess: (provider) => {
      // A changed address or kind may list other models.
      queryClient.removeQueries({ queryKey: modelKeys.models(provider.name) });
      return refreshProviders(queryClient);
    },
  });
}

export function useRemoveProvider() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => api.removeProvider(name),
    onSuccess: (_, name) => {
      queryClient.removeQueries({ queryKey: modelKeys.models(name) });
      return refreshProviders(queryClient);
    },
  });
}

/**
 * Sends the key typed into `field` and empties the field at once. The key is passed as the
 * field rather than its text so that it is kept nowhere: not in React state, not in the
 * mutation's variables, which live on after the call.
 */
export function useSetProviderKey(name: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (field: HTMLInputElement) => {
      const key = field.value;
      field.value = "";
      try {
        return await api.setProviderKey(name, key);
      } catch (error) {
        // Not kept (no place for it yet, or refused): what the person pasted is not lost.
        if (!field.value) field.value = key;
        throw error;
      }
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: modelKeys.providers }),
  });
}

export function useForgetProviderKey(name: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => api.forgetProviderKey(name),
    // The engine announces no event for this one.
    onSettled: () => queryClient.invalidateQueries({ queryKey: modelKeys.providers }),
  });
}

/** Where secret values are kept on this computer (the keyring, or Healer's own file). */
export function useKeepStatus() {
  return useQuery({ queryKey: modelKeys.keep, queryFn: api.keepStatus, staleTime: 60_000 });
}

export function useChooseSecretsFile() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: api.chooseSecretsFile,
    onSuccess: (status) => queryClient.setQueryData(modelKeys.keep, status),
  });
}

export function useWorkflowSecrets(workflowId: number) {
  return useQuery({ queryKey: modelKeys.workflowSecrets(workflowId), queryFn: () => api.listWorkflowSecrets(workflowId) });
}

export function useSetWorkflowSecret(workflowId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ name, value }: { name: string; value: string }) => api.setWorkflowSecret(workflowId, name, value),
    onSettled: () => queryClient.invalidateQueries({ queryKey: modelKeys.workflowSecrets(workflowId) }),
  });
}

export function useRemoveWorkflowSecret(workflowId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => api.removeWorkflowSecret(workflowId, name),
    onSettled: () => queryClient.invalidateQueries({ queryKey: modelKeys.workflowSecrets(workflowId) }),
  });
}

export function useTestProvider(name: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => api.testProvider(name),
    onSuccess: (test: ConnectionTest) => {
      if (test.ok) queryClient.setQueryData(modelKeys.models(name), test.models);
      // The test says where the key came from, which may be news to the list.
      return queryClient.invalidateQueries({ queryKey: modelKeys.providers });
    },
  });
}

export function useSetTier() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (setting: TierSetting) => api.setTier(setting),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: modelKeys.tiers }),
  });
}

export function useClearTier() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (tier: Tier) => api.clearTier(tier),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: modelKeys.tiers }),
  });
}

export function useSteeringModel() {
  return useQuery({ queryKey: modelKeys.steeringModel, queryFn: api.getSteeringModel });
}

export function useSteeringSettings() {
  return useQuery({ queryKey: modelKeys.steeringSettings, queryFn: api.getSteeringSettings });
}

/** Sessions move while they run: the list is looked at again every few seconds. */
const LIVE_SESSIONS_POLL_MS = 5_000;

/** Every project's sessions, newest first; kept fresh with the live ones. */
export function usePastSessions() {
  return useQuery({ queryKey: ["past-sessions"] as const, queryFn: api.listPastSessions, refetchInterval: LIVE_SESSIONS_POLL_MS });
}

/** How often the person's own past sessions are looked at again: each look walks a month of transcripts. */
const OWN_HISTORY_POLL_MS = 60_000;

/** The person's own Claude Code sessions Healer watched (empty unless watching is on). */
export function useOwnPastSessions() {
  return useQuery({ queryKey: ["own-past-sessions"] as const, queryFn: api.listOwnPastSessions, refetchInterval: OWN_HISTORY_POLL_MS });
}

export function useLiveSessions() {
  return useQuery({ queryKey: ["live-sessions"] as const, queryFn: api.listLiveSessions, refetchInterval: LIVE_SESSIONS_POLL_MS });
}

export function useSetSteeringModel() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (setting: SteeringModelSetting | null) => api.setSteeringModel(setting),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: modelKeys.steeringModel }),
  });
}

export function useSetSteeringSettings() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (settings: SteeringSettings) => api.setSteeringSettings(settings),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["live-sessions"] });
      return queryClient.invalidateQueries({ queryKey: modelKeys.steeringSettings });
    },
  });
}

export function useSetBudgets() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (budgets: Budgets) => api.setBudgets(budgets),
    onSuccess: () => {
      // The usage report carries the caps it is measured against.
      void queryClient.invalidateQueries({ queryKey: modelKeys.usage });
      return queryClient.invalidateQueries({ queryKey: modelKeys.budgets });
    },
  });
}
