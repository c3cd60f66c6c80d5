import { getCurrentWindow } from "@tauri-apps/api/window";
import { useEffect, useRef, useState } from "react";
import { navigate, setLeaveGuard } from "../usePage";
import { Dialog } from "./Dialog";

/** Where the person wanted to go: a page (its hash), or out of the app (closing the window). */
type Leaving = { to: string } | { close: true };

/**
 * While `dirty`, leaving the screen (a link, the sidebar, a shortcut) or closing the window asks
 * first: stay, or leave and lose the edits. `stays(hash)` says which moves do not leave (a
 * workflow's own tabs).
 */
export function UnsavedGuard({
  dirty,
  stays,
  what,
  onDiscard,
}: {
  dirty: boolean;
  stays: (hash: string) => boolean;
  /** "your edits to the script" */
  what: string;
  onDiscard: () => void;
}) {
  const [leaving, setLeaving] = useState<Leaving | null>(null);
  const staysRef = useRef(stays);
  useEffect(() => {
    staysRef.current = stays;
  });

  useEffect(() => {
    if (!dirty) return;
    setLeaveGuard({ stays: (hash) => staysRef.current(hash), ask: (to) => setLeaving({ to }) });
    let unlisten: (() => void) | null = null;
    let gone = false;
    try {
      void getCurrentWindow()
        .onCloseRequested((event) => {
          event.preventDefault();
          setLeaving({ close: true });
        })
        .then((stop) => (gone ? stop() : (unlisten = stop)))
        .catch(() => {
          /* not in the desktop shell (tests): nothing to guard */
        });
    } catch {
      /* not in the desktop shell */
    }
    return () => {
      gone = true;
      setLeaveGuard(null);
      unlisten?.();
    };
  }, [dirty]);

  if (leaving === null) return null;
  return (
    <Dialog
      title="Leave without saving your changes?"
      onCancel={() => setLeaving(null)}
      actions={
        <>
          <button type="button" className="button" data-autofocus data-testid="leave-stay" onClick={() => setLeaving(null)}>
            Stay and keep editing
          </button>
          <button
            type="button"
            className="button button-danger"
            data-testid="leave-discard"
            onClick={() => {
              setLeaveGuard(null);
              setLeaving(null);
              onDiscard();
              if ("to" in leaving) navigate(leaving.to);
              else void getCurrentWindow().destroy();
            }}
          >
            {"to" in leaving ? "Leave and discard them" : "Close and discard them"}
          </button>
        </>
      }
    >
      <p>{`${what.charAt(0).toUpperCase()}${what.slice(1)} are not saved yet. If you leave now, they are lost.`}</p>
    </Dialog>
  );
}
