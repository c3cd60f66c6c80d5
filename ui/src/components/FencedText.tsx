import { segments } from "../threadText";

/**
 * A thread text as a person reads it: prose as prose, keeping its line breaks, and code and
 * output in monospace blocks. The script's own output is marked as such.
 */
export function FencedText({ text, className }: { text: string; className?: string }) {
  return (
    <div className={className ? `fenced-text ${className}` : "fenced-text"}>
      {segments(text).map((segment, i) =>
        segment.kind === "text" ? (
          <p key={i} className="fenced-prose">
            {segment.text}
          </p>
        ) : (
          <figure key={i} className={segment.untrusted ? "fenced-block untrusted" : "fenced-block"}>
            {(segment.label || segment.untrusted) && (
              <figcaption className="fenced-caption">
                {segment.label && <span className="fenced-label">{segment.label}</span>}
                {segment.untrusted && <span className="fenced-note">the script's own output</span>}
              </figcaption>
            )}
            <pre className="fenced-code" tabIndex={0}>
              {segment.text || "(empty)"}
            </pre>
          </figure>
        ),
      )}
    </div>
  );
}
