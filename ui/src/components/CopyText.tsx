import { useRef, useState } from "react";
import { CopyIcon } from "./icons";

/**
 * A line of text to copy (a folder, a command to type on another computer) with its Copy
 * button; without clipboard access the text is selected for the person to copy.
 */
export function CopyText({ label, text, testId, className = "" }: { label: string; text: string; testId?: string; className?: string }) {
  const shown = useRef<HTMLElement>(null);
  const [copied, setCopied] = useState(false);

  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
      window.setTimeout(() => setCopied(false), 1600);
    } catch {
      const selection = window.getSelection();
      if (shown.current && selection) selection.selectAllChildren(shown.current);
    }
  }

  return (
    <div className={`path-row ${className}`.trim()}>
      <span className="folder-label">{label}</span>
      <code className="path" ref={shown} data-testid={testId}>
        {text}
      </code>
      <button type="button" className="button button-small" onClick={() => void copy()}>
        <CopyIcon size={15} />
        {copied ? "Copied" : "Copy"}
      </button>
    </div>
  );
}
