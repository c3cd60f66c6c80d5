import DOMPurify from "dompurify";
import MarkdownIt from "markdown-it";
import { useMemo } from "react";

// Raw HTML in the text is shown as text, links never open a URL scheme other than the usual
// ones, and what markdown-it makes is sanitised again: the log is written by agents.
const markdown = new MarkdownIt({ html: false, linkify: true, breaks: false });

/** Markdown written by people and agents (progress.md), rendered and sanitised. */
export function Markdown({ text, testId }: { text: string; testId?: string }) {
  const html = useMemo(
    () => DOMPurify.sanitize(markdown.render(text), { USE_PROFILES: { html: true }, FORBID_TAGS: ["img", "style", "form", "input"] }),
    [text],
  );
  // The HTML is sanitised just above.
  return <div className="markdown" data-testid={testId} dangerouslySetInnerHTML={{ __html: html }} />;
}
