// Closing the window destroys it (Healer stays light in the tray); opening Healer makes a new
// one. So the window tells the shell where the person is as they move, and a new window asks
// once, at its start, and opens there: the same screen, scrolled as it was.
import { useEffect, type RefObject } from "react";
import { api } from "./api";
import type { SavedView } from "./bindings";

/** How long after the last scroll or screen change the place is reported. */
const REPORT_AFTER_MS = 250;
/** How long a restored scroll position waits for the screen's content to be tall enough. */
const RESTORE_FOR_MS = 3000;

let pending: SavedView | null = null;

/** Before the first render: go to the screen the previous window showed, if there was one. */
export async function openWhereLeft(): Promise<void> {
  let view: SavedView | null = null;
  try {
    view = await api.restoredView();
  } catch (error) {
    console.error("Healer: cannot ask where the last window was", error);
  }
  if (!view) return;
  pending = view;
  if (view.hash && view.hash !== window.location.hash) window.location.hash = view.hash;
}

/** Keeps the shell told where the person is in `main` (the scrolling content). */
export function useRememberView(main: RefObject<HTMLElement | null>) {
  useEffect(() => {
    const element = main.current;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const report = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        const view = { hash: window.location.hash, scroll: Math.max(0, Math.round(element?.scrollTop ?? 0)) };
        api.rememberView(view).catch((error: unknown) => console.error("Healer: cannot remember the view", error));
      }, REPORT_AFTER_MS);
    };
    report();
    window.addEventListener("hashchange", report);
    element?.addEventListener("scroll", report, { passive: true });
    return () => {
      clearTimeout(timer);
      window.removeEventListener("hashchange", report);
      element?.removeEventListener("scroll", report);
    };
  }, [main]);
}

/**
 * Scrolls `main` back to where the previous window was, once its content has loaded far
 * enough; gives up quietly after a few seconds or when the person goes elsewhere.
 */
export function useRestoreScroll(main: RefObject<HTMLElement | null>) {
  useEffect(() => {
    const view = pending;
    const element = main.current;
    if (!view || !element) return;
    const until = Date.now() + RESTORE_FOR_MS;
    let frame = 0;
    // Consumed when it ends, not when it starts: a re-run effect picks up where it was.
    const step = () => {
      if (window.location.hash !== view.hash || view.scroll <= 0) {
        pending = null;
        return;
      }
      element.scrollTop = view.scroll;
      if (Math.abs(element.scrollTop - view.scroll) < 1 || Date.now() > until) {
        pending = null;
        return;
      }
      frame = requestAnimationFrame(step);
    };
    step();
    return () => cancelAnimationFrame(frame);
  }, [main]);
}
