// Checkpoints: the decisions Healer stops to ask the person for.
import { useMutation, useQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { api } from "./api";
import type { Checkpoint, CheckpointList } from "./bindings";

export const checkpointKeys = {
  list: ["checkpoints"] as const,
};

export type Decide = { id: number; option: number; notes: string | null };

export function useCheckpoints() {
  return useQuery({ queryKey: checkpointKeys.list, queryFn: api.listCheckpoints });
}

/** Oldest first, as the engine lists them (by id). */
function byAge(a: Checkpoint, b: Checkpoint): number {
  return a.id - b.id;
}

function update(queryClient: QueryClient, change: (list: CheckpointList) => CheckpointList) {
  queryClient.setQueryData<CheckpointList>(checkpointKeys.list, (list) => (list ? change(list) : list));
}

/**
 * Decides a checkpoint. It leaves the pending list at once, so the next question shows without
 * waiting; if the engine refuses, it comes back and `onRefused` hears why. (It is told for every
 * refused decision, not only the latest, so a quick second decision cannot hide the first one's.)
 */
export function useDecideCheckpoint(onRefused: (error: unknown, decision: Decide) => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, option, notes }: Decide) => api.decideCheckpoint(id, option, notes),
    onMutate: async ({ id }) => {
      await queryClient.cancelQueries({ queryKey: checkpointKeys.list });
      const removed = queryClient.getQueryData<CheckpointList>(checkpointKeys.list)?.pending.find((c) => c.id === id);
      update(queryClient, (list) => ({ ...list, pending: list.pending.filter((c) => c.id !== id) }));
      return { removed };
    },
    onError: (error, decision, context) => {
      const removed = context?.removed;
      if (removed) {
        update(queryClient, (list) =>
          list.pending.some((c) => c.id === removed.id) ? list : { ...list, pending: [...list.pending, removed].sort(byAge) },
        );
      }
      onRefused(error, decision);
    },
    onSuccess: (decided) =>
      update(queryClient, (list) => ({ ...list, decided: [decided, ...list.decided.filter((c) => c.id !== decided.id)] })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: checkpointKeys.list }),
  });
}
