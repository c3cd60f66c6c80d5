// Other computers: the connection to a Temporal cluster, where each workflow runs, and Stop on
// a run in progress there.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api } from "./api";
import type { ClusterSettings, RunsOn } from "./bindings";
import { workflowKeys } from "./queries";

export const clusterKeys = {
  status: ["cluster-status"] as const,
  runsOn: (workflowId: number) => ["runs-on", workflowId] as const,
  workerGateway: ["worker-gateway"] as const,
};

/** Workers come and go: the list is looked at again every few seconds while it is shown. */
const WORKERS_POLL_MS = 10_000;

export function useClusterStatus({ poll = false }: { poll?: boolean } = {}) {
  return useQuery({
    queryKey: clusterKeys.status,
    queryFn: api.clusterStatus,
    refetchInterval: poll ? WORKERS_POLL_MS : false,
  });
}

export function useTestCluster() {
  return useMutation({ mutationFn: (settings: ClusterSettings) => api.testCluster(settings) });
}

export function useConnectCluster() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (settings: ClusterSettings) => api.connectCluster(settings),
    onSuccess: (status) => queryClient.setQueryData(clusterKeys.status, status),
  });
}

export function useDisconnectCluster() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: api.disconnectCluster,
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: clusterKeys.status });
      void queryClient.invalidateQueries({ queryKey: ["runs-on"] });
    },
  });
}

export function useRunsOn(workflowId: number) {
  return useQuery({ queryKey: clusterKeys.runsOn(workflowId), queryFn: () => api.getRunsOn(workflowId) });
}

export function useSetRunsOn(workflowId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (runsOn: RunsOn) => api.setRunsOn(workflowId, runsOn),
    onSuccess: (runsOn) => {
      queryClient.setQueryData(clusterKeys.runsOn(workflowId), runsOn);
      void queryClient.invalidateQueries({ queryKey: clusterKeys.status });
    },
  });
}

export function useStopRun(workflowId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (runId: number) => api.stopRun(runId),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: workflowKeys.runs(workflowId) }),
  });
}

export function useExportClusterKey() {
  return useMutation({ mutationFn: (path: string) => api.exportClusterKey(path) });
}

export function useWorkerGateway() {
  return useQuery({ queryKey: clusterKeys.workerGateway, queryFn: api.workerGateway });
}

export function useOpenGatewayToWorkers() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (listen: string) => api.openGatewayToWorkers(listen),
    onSuccess: (gateway) => queryClient.setQueryData(clusterKeys.workerGateway, gateway),
  });
}

export function useMakeWorkerToken() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => api.makeWorkerToken(name),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: clusterKeys.workerGateway }),
  });
}

export function useForgetWorkerToken() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => api.forgetWorkerToken(name),
    onSuccess: (gateway) => queryClient.setQueryData(clusterKeys.workerGateway, gateway),
  });
}
