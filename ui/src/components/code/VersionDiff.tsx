import { MergeView } from "@codemirror/merge";
import { EditorState } from "@codemirror/state";
import { EditorView } from "@codemirror/view";
import { useEffect, useRef } from "react";
import type { Runtime } from "../../bindings";
import { common, languageFor } from "./setup";

export type VersionDiffProps = {
  before: string;
  after: string;
  runtime: Runtime;
  /** Told the lines (first, last; counted from 1) of the new side the person selects. */
  onSelectLines?: (from: number, to: number) => void;
};

/** Two versions of a script side by side, changes marked; neither side can be edited. */
export default function VersionDiff({ before, after, runtime, onSelectLines }: VersionDiffProps) {
  const host = useRef<HTMLDivElement>(null);
  const runtimeKey = JSON.stringify(runtime);
  // The latest callback, without rebuilding the view when it changes.
  const selected = useRef(onSelectLines);
  useEffect(() => {
    selected.current = onSelectLines;
  });

  useEffect(() => {
    if (!host.current) return;
    const side = (doc: string) => ({
      doc,
      extensions: [
        common,
        languageFor(JSON.parse(runtimeKey) as Runtime),
        EditorState.readOnly.of(true),
        EditorView.editable.of(false),
        // Side by side, half the width each: long lines wrap rather than hide.
        EditorView.lineWrapping,
      ],
    });
    const newSide = side(after);
    newSide.extensions.push(
      EditorView.updateListener.of((update) => {
        if (!update.selectionSet || !selected.current) return;
        const { from, to } = update.state.selection.main;
        const doc = update.state.doc;
        selected.current(doc.lineAt(from).number, doc.lineAt(to).number);
      }),
    );
    const merge = new MergeView({
      a: side(before),
      b: newSide,
      parent: host.current,
      gutter: true,
      highlightChanges: true,
      collapseUnchanged: { margin: 3, minSize: 6 },
    });
    return () => merge.destroy();
  }, [before, after, runtimeKey]);

  return <div className="code-surface version-diff-view" ref={host} />;
}
