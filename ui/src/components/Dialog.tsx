import { useEffect, useId, useRef, type KeyboardEvent, type ReactNode } from "react";
import { createPortal } from "react-dom";
import { keepTabInside } from "./focusTrap";

/**
 * A modal question. Focus stays inside while it is open, Escape or a click outside cancels, and
 * focus goes back where it was when it closes. The first element marked `data-autofocus` (else
 * the first button) gets focus, so a destructive action is never one keypress away.
 */
export function Dialog({
  title,
  children,
  actions,
  onCancel,
  tone = "neutral",
  wide = false,
}: {
  title: string;
  children: ReactNode;
  actions: ReactNode;
  onCancel: () => void;
  tone?: "neutral" | "danger";
  /** Room for code, such as a comparison of two versions. */
  wide?: boolean;
}) {
  const box = useRef<HTMLDivElement>(null);
  const titleId = useId();
  const bodyId = useId();
  const cancel = useRef(onCancel);
  useEffect(() => {
    cancel.current = onCancel;
  });

  useEffect(() => {
    const before = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    const first = box.current?.querySelector<HTMLElement>("[data-autofocus]") ?? box.current?.querySelector<HTMLElement>("button");
    first?.focus();
    return () => before?.focus();
  }, []);

  function onKeyDown(event: KeyboardEvent) {
    if (event.key === "Escape") {
      event.stopPropagation();
      cancel.current();
      return;
    }
    keepTabInside(event, box.current);
  }

  return createPortal(
    <div className="dialog-backdrop" onMouseDown={(e) => e.target === e.currentTarget && cancel.current()}>
      <div
        className={`dialog tone-${tone}${wide ? " dialog-wide" : ""}`}
        role="alertdialog"
        aria-modal="true"
        aria-labelledby={titleId}
        aria-describedby={bodyId}
        ref={box}
        onKeyDown={onKeyDown}
      >
        <h2 className="dialog-title" id={titleId}>
          {title}
        </h2>
        <div className="dialog-body" id={bodyId}>
          {children}
        </div>
        <div className="dialog-actions">{actions}</div>
      </div>
    </div>,
    document.body,
  );
}
