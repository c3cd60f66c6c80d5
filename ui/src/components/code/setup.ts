// The CodeMirror pieces the editor and the diff share: the language for a runtime, and a look
// that matches the app (its colours come from the app's CSS variables).
import { indentWithTab, defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { javascript } from "@codemirror/lang-javascript";
import { python } from "@codemirror/lang-python";
import {
  bracketMatching,
  HighlightStyle,
  indentOnInput,
  StreamLanguage,
  syntaxHighlighting,
} from "@codemirror/language";
import { shell } from "@codemirror/legacy-modes/mode/shell";
import type { Extension } from "@codemirror/state";
import {
  drawSelection,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  highlightSpecialChars,
  keymap,
  lineNumbers,
} from "@codemirror/view";
import { tags } from "@lezer/highlight";
import type { Runtime } from "../../bindings";

const shellLanguage = StreamLanguage.define(shell);

/** Syntax highlighting for what `runtime` runs; a custom command is guessed from its program. */
export function languageFor(runtime: Runtime): Extension {
  const kind = runtime.kind === "custom" ? guessKind(runtime.command) : runtime.kind;
  switch (kind) {
    case "python3":
      return python();
    case "node":
      return javascript();
    case "bash":
      return shellLanguage;
    default:
      return [];
  }
}

function guessKind(command: string): Runtime["kind"] | null {
  const program = command.trim().split(/\s+/)[0]?.split("/").pop() ?? "";
  if (/^python/.test(program)) return "python3";
  if (/^(node|deno|bun|tsx|ts-node)$/.test(program)) return "node";
  if (/^(ba|z|da|k)?sh$/.test(program)) return "bash";
  return null;
}

/** Quiet colours in the spirit of the app's palette; light and dark values are in people.css. */
const highlightStyle = HighlightStyle.define([
  { tag: [tags.keyword, tags.controlKeyword, tags.moduleKeyword, tags.operatorKeyword], color: "var(--code-keyword)" },
  { tag: [tags.string, tags.special(tags.string)], color: "var(--code-string)" },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], color: "var(--code-number)" },
  { tag: [tags.comment, tags.lineComment, tags.blockComment], color: "var(--code-comment)", fontStyle: "italic" },
  { tag: [tags.function(tags.variableName), tags.function(tags.propertyName)], color: "var(--code-function)" },
  { tag: [tags.definition(tags.variableName), tags.definition(tags.function(tags.variableName))], color: "var(--code-definition)" },
  { tag: [tags.className, tags.typeName], color: "var(--code-type)" },
  { tag: tags.propertyName, color: "var(--code-property)" },
  { tag: [tags.variableName, tags.special(tags.variableName)], color: "var(--code-variable)" },
  { tag: tags.invalid, color: "var(--code-invalid)" },
]);

export const theme = EditorView.theme({
  "&": {
    fontSize: "13px",
    backgroundColor: "var(--surface)",
    color: "var(--text)",
  },
  "&.cm-focused": { outline: "none" },
  ".cm-scroller": {
    fontFamily: "var(--font-mono)",
    lineHeight: "1.6",
  },
  ".cm-content": { padding: "10px 0" },
  ".cm-line": { padding: "0 14px 0 10px" },
  ".cm-gutters": {
    backgroundColor: "var(--surface-raised)",
    color: "var(--text-faint)",
    borderRight: "1px solid var(--border)",
  },
  ".cm-lineNumbers .cm-gutterElement": { padding: "0 10px 0 14px", minWidth: "40px" },
  ".cm-activeLine": { backgroundColor: "rgba(15, 118, 110, 0.05)" },
  ".cm-activeLineGutter": { backgroundColor: "rgba(15, 118, 110, 0.08)", color: "var(--text-muted)" },
  "&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection": {
    backgroundColor: "rgba(15, 118, 110, 0.18)",
  },
  ".cm-cursor": { borderLeftColor: "var(--accent)", borderLeftWidth: "2px" },
  "&.cm-focused .cm-matchingBracket": { backgroundColor: "rgba(15, 118, 110, 0.16)", outline: "none" },
  // The diff's "N unchanged lines" bar: CodeMirror draws ⦚ marks that the app's fonts lack.
  ".cm-collapsedLines:before, .cm-collapsedLines:after": { content: '"···"' },
});

/**
 * The nonce Tauri put on index.html's <style> and allowed in the CSP; CodeMirror adds its style
 * elements with it. Empty outside the app (tests, the dev server without a CSP).
 */
function styleNonce(): string {
  const carrier = document.querySelector<HTMLStyleElement>("style[data-csp-nonce]");
  return carrier?.nonce || carrier?.getAttribute("nonce") || "";
}

/** What every code surface has: line numbers, the app's look and highlighting. */
export const common: Extension = [
  EditorView.cspNonce.of(styleNonce()),
  lineNumbers(),
  highlightSpecialChars(),
  syntaxHighlighting(highlightStyle),
  theme,
];

/** What an editable code surface adds. */
export const editing: Extension = [
  history(),
  drawSelection(),
  indentOnInput(),
  bracketMatching(),
  highlightActiveLine(),
  highlightActiveLineGutter(),
  keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
];
