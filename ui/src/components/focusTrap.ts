import type { KeyboardEvent } from "react";

const FOCUSABLE = 'button:not(:disabled), [href], input:not(:disabled), select, textarea, [tabindex]:not([tabindex="-1"])';

/** Keeps Tab and Shift+Tab going round the focusable elements inside `box`. */
export function keepTabInside(event: KeyboardEvent, box: HTMLElement | null) {
  if (event.key !== "Tab" || !box) return;
  // In document order, which not every DOM implementation keeps for a selector list.
  const items = [...box.querySelectorAll<HTMLElement>(FOCUSABLE)].sort((a, b) =>
    a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1,
  );
  if (items.length === 0) return;
  const first = items[0];
  const last = items[items.length - 1];
  const inside = box.contains(document.activeElement) && document.activeElement !== box;
  if (event.shiftKey && (document.activeElement === first || !inside)) {
    event.preventDefault();
    last.focus();
  } else if (!event.shiftKey && (document.activeElement === last || !inside)) {
    event.preventDefault();
    first.focus();
  }
}
