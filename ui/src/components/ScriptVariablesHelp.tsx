/** What Healer hands a script when it runs it: shown beside the script editors. */
export function ScriptVariablesHelp() {
  return (
    <details className="script-help" data-testid="script-variables-help">
      <summary>What Healer gives your script</summary>
      <dl>
        <dt>
          <code>HEALER_RESULT</code>
        </dt>
        <dd>A file to write the script's result to, as JSON.</dd>
        <dt>
          <code>HEALER_RUN_ID</code>, <code>HEALER_ATTEMPT</code>
        </dt>
        <dd>Which run this is, and which attempt of it.</dd>
        <dt>
          <code>HEALER_RECOVERY_HINT</code>
        </dt>
        <dd>
          Set only when Healer runs the script again after a failure with a suggestion, such as “the main server is
          down; use the mirror”. Your script may read it and act on it; a script that ignores it runs as usual.
        </dd>
      </dl>
    </details>
  );
}
