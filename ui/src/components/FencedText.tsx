import { forPerson, plainWords, segments } from "../threadText";

/**
 * A thread text as a person reads it: prose as prose, keeping its line breaks, and code and
 * output in monospace blocks. The script's own output is marked as such.
 */
export function FencedText({ text, className, brief = false }: { text: string; className?: string; brief?: boolean }) {
  return (
    <div className={className ? `fenced-text ${className}` : "fenced-text"}>
      {segments(text).map((segment, i) =>
        segment.kind === "text" ? (
          // `brief`: Healer's words to the model, without what only the model needs to hear.
          (brief ? forPerson(segment.text) : plainWords(segment.text)) && (
            <p key={i} className="fenced-prose">
              {brief ? forPerson(segment.text) : plainWords(segment.text)}
            </p>
          )
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
