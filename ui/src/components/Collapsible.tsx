import { useId, useState, type ReactNode } from "react";

/**
 * Long content shown cut to a few lines at first, with a button to show it all. Short content
 * (`long` false) shows whole, with no button. The cut-off part stays in the page, so it can be
 * searched and read by assistive technology.
 */
export function Collapsible({ long, children, more = "Show all", less = "Show less" }: { long: boolean; children: ReactNode; more?: string; less?: string }) {
  const [open, setOpen] = useState(false);
  const id = useId();
  if (!long) return <>{children}</>;
  return (
    <div className={open ? "collapsible open" : "collapsible"}>
      <div className="collapsible-body" id={id}>
        {children}
      </div>
      <button type="button" className="link-button collapsible-toggle" aria-expanded={open} aria-controls={id} onClick={() => setOpen(!open)}>
        {open ? less : more}
      </button>
    </div>
  );
}
