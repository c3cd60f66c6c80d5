// Healing memory and safety: the errors Healer remembers with the fixes tried for them, the
// decisions it made on its own, and whether a safety breaker paused scheduled runs.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api } from "./api";

export const memoryKeys = {
  /** Everything remembered about errors: the list and each signature's page. */
  all: ["memory"] as const,
  patterns: ["memory", "patterns"] as const,
  pattern: (signature: string) => ["memory", "pattern", signature] as const,
  packages: (signature: string) => ["memory", "packages", signature] as const,
  decisions: ["decisions"] as const,
  schedulerPause: ["scheduler-pause"] as const,
};

export function usePatterns() {
  return useQuery({ queryKey: memoryKeys.patterns, queryFn: api.listPatterns });
}

export function usePattern(signature: string) {
  return useQuery({ queryKey: memoryKeys.pattern(signature), queryFn: () => api.getPattern(signature) });
}

/** Packages installed for an error signature (a missing module), newest first. */
export function usePackageFixes(signature: string) {
  return useQuery({ queryKey: memoryKeys.packages(signature), queryFn: () => api.listPackageFixes(signature) });
}

export function useDecisions() {
  return useQuery({ queryKey: memoryKeys.decisions, queryFn: api.listDecisions });
}

/** Why scheduled runs are paused; null while they run. */
export function useSchedulerPause() {
  return useQuery({ queryKey: memoryKeys.schedulerPause, queryFn: api.getSchedulerPause });
}

export function useResumeScheduler() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: api.resumeScheduler,
    onSuccess: () => {
      // The banner goes at once; the engine's own event refreshes the rest as well.
      queryClient.setQueryData(memoryKeys.schedulerPause, null);
      void queryClient.invalidateQueries({ queryKey: memoryKeys.decisions });
      return queryClient.invalidateQueries({ queryKey: memoryKeys.schedulerPause });
    },
  });
}
