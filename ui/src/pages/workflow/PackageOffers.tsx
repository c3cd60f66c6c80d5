import { useEffect, useState } from "react";
import type { ProposedPackage, Runtime } from "../../bindings";
import { proposalWhy } from "../../packageText";
import { SYNTAX_CHECK_DELAY_MS, useProposedPackages } from "../../queries";

/** `value` once it has stopped changing for `ms`. */
function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/**
 * The packages a script imports that its workflow lacks, read as the person types; each is
 * offered with a tick, and the ticked ones are what the saved version declares.
 */
export function usePackageOffers(runtime: Runtime, code: string | null, workflowId: number | null) {
  const settled = useSettled(code, SYNTAX_CHECK_DELAY_MS);
  const offers = useProposedPackages(runtime, settled !== null && settled === code ? settled : null, workflowId);
  const [declined, setDeclined] = useState<string[]>([]);
  const list = code === null ? [] : (offers.data ?? []);
  return {
    offers: list,
    declined,
    toggle: (name: string) =>
      setDeclined((now) => (now.includes(name) ? now.filter((n) => n !== name) : [...now, name])),
    /** The ticked packages' names. */
    chosen: list.filter((p) => !declined.includes(p.package)).map((p) => p.package),
  };
}

export function PackageOffers({
  offers,
  declined,
  onToggle,
  version,
}: {
  offers: ProposedPackage[];
  declined: string[];
  onToggle: (name: string) => void;
  /** The version they would come with ("2.0"), or null for a new workflow. */
  version: string | null;
}) {
  if (offers.length === 0) return null;
  const lead = version
    ? `Ticked ones come with version ${version} and are installed into this workflow's own environment before its next run.`
    : "Ticked ones come with the workflow and are installed into its own environment before its first run.";
  return (
    <fieldset className="package-offers" data-testid="package-offers">
      <legend className="field-label">This script imports packages the workflow doesn't have yet</legend>
      <p className="field-hint">{lead} Healer installs an unticked one by itself if a run needs it.</p>
      <ul className="package-offer-list">
        {offers.map((p) => {
          const why = proposalWhy(p.source, p.module);
          return (
            <li key={p.package}>
              <label className="checkbox-row">
                <input
                  type="checkbox"
                  checked={!declined.includes(p.package)}
                  onChange={() => onToggle(p.package)}
                  data-testid="package-offer"
                  data-package={p.package}
                />
                <span className="package-offer-name">{p.package}</span>
                <span className="muted">
                  for <code>{p.module}</code> (line {p.line}){why ? ` — ${why}` : ""}
                </span>
              </label>
            </li>
          );
        })}
      </ul>
    </fieldset>
  );
}
