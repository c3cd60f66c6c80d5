import { useEffect, useState } from "react";
import type { Checkpoint } from "./bindings";
import { useDecideCheckpoint } from "./checkpointQueries";
import { CheckpointDialog, type Draft } from "./components/CheckpointDialog";
import { trackInput } from "./inputQuiet";
import { postpone } from "./postponed";
import { navigate } from "./usePage";

/** Where the person was before the questions came: focus goes back there once they are answered. */
function ReturnFocus() {
  useEffect(() => {
    const before = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    return () => {
      if (before?.isConnected) before.focus();
    };
  }, []);
  return null;
}

type Refused = Draft & { id: number; error: unknown };

/**
 * Asks the oldest pending checkpoint, over whatever page is open, until none is left. Deciding
 * shows the next one at once; a decision the engine refuses brings its question back, with
 * the reason and what the person had chosen and written.
 */
export function CheckpointPrompt({ pending }: { pending: Checkpoint[] }) {
  const [refused, setRefused] = useState<Refused | null>(null);
  // A question that appears while the person is typing or clicking waits for them to stop.
  useEffect(trackInput, []);
  const decide = useDecideCheckpoint((error, { id, option, notes }) => setRefused({ id, option, notes: notes ?? "", error }));
  const current = pending.at(0);
  if (!current) return null;
  const draft = refused?.id === current.id ? refused : null;
  return (
    <>
      <ReturnFocus />
      <CheckpointDialog
        key={current.id}
        checkpoint={current}
        more={pending.length - 1}
        draft={draft}
        error={draft?.error ?? null}
        onDecide={(option, notes) => {
          setRefused(null);
          decide.mutate({ id: current.id, option, notes });
        }}
        onLater={(goTo) => {
          for (const c of pending) postpone(c.id);
          if (goTo) navigate(goTo);
        }}
      />
    </>
  );
}
