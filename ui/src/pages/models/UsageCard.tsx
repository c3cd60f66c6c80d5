import { useId } from "react";
import type { Tier, UsageReport, UsageTotals } from "../../bindings";
import { InlineError } from "../../components/InlineError";
import { Spinner } from "../../components/Loading";
import { dayText, percent, tierLabel, tiers, tokens, usd } from "../../modelText";
import { useUsageToday } from "../../queries";
import { durationText } from "../../workflowText";

const none: UsageTotals = {
  calls: 0, prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, cost_usd: null, unpriced_calls: 0, local_calls: 0, local_secs: 0,
};

/** What counts against the token caps: cached prompt tokens are part of the prompt. */
function used(totals: UsageTotals): number {
  return totals.prompt_tokens + totals.completion_tokens;
}

/** A bar of `used` against `cap`. Drawn in SVG: the CSP allows no style attributes for a width. */
function Meter({ label, value, share, testId }: { label: string; value: string; share: number | null; testId: string }) {
  const tone = share === null ? "" : share >= 100 ? "tone-bad" : share >= 80 ? "tone-working" : "";
  return (
    <div className="meter" data-testid={testId}>
      <div className="meter-head">
        <span className="meter-label">{label}</span>
        <span className="meter-value">{value}</span>
      </div>
      {share !== null && (
        <svg
          className={`meter-bar ${tone}`}
          width="100%"
          height="8"
          role="meter"
          aria-label={label}
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={share}
          aria-valuetext={value}
        >
          <rect className="meter-track" width="100%" height="8" rx="4" />
          {share > 0 && <rect className="meter-fill" width={`${Math.max(share, 1)}%`} height="8" rx="4" />}
        </svg>
      )}
    </div>
  );
}

/** Money, or for calls that all went to a model on this computer, the time they took. */
function cost(totals: UsageTotals): string {
  if (totals.calls > 0 && totals.local_calls === totals.calls) return durationText(totals.local_secs * 1000);
  return totals.cost_usd === null ? "—" : usd(totals.cost_usd);
}

function Row({ label, totals, testId }: { label: string; totals: UsageTotals; testId: string }) {
  return (
    <tr data-testid={testId}>
      <th scope="row">{label}</th>
      <td>{tokens(totals.calls)}</td>
      <td>{tokens(totals.prompt_tokens)}</td>
      <td>{tokens(totals.cached_tokens)}</td>
      <td>{tokens(totals.completion_tokens)}</td>
      <td>{cost(totals)}</td>
    </tr>
  );
}

function Usage({ report }: { report: UsageReport }) {
  const { total, budgets } = report;
  const byTier = (tier: Tier) => report.by_tier.find((t) => t.tier === tier)?.totals ?? none;
  const spent = total.cost_usd ?? 0;
  // Calls to models at home have no price and need none.
  const elsewhere = total.unpriced_calls - total.local_calls;
  const costCap = budgets.per_day_cost_usd;
  return (
    <>
      <div className="meters">
        <Meter
          label="Tokens"
          value={`${tokens(used(total))} of ${tokens(budgets.per_day_tokens)}`}
          share={percent(used(total), budgets.per_day_tokens)}
          testId="usage-tokens"
        />
        <Meter
          label="Cost"
          value={costCap === null ? `${usd(spent)} · no daily cap` : `${usd(spent)} of ${usd(costCap)}`}
          share={costCap === null ? null : percent(spent, costCap)}
          testId="usage-cost"
        />
      </div>
      {total.calls === 0 ? (
        <p className="empty-note">No model calls yet today.</p>
      ) : (
        <div className="usage-table-wrap">
          <table className="usage-table">
            <thead>
              <tr>
                <th scope="col">Tier</th>
                <th scope="col">Calls</th>
                <th scope="col">Prompt</th>
                <th scope="col">Of which cached</th>
                <th scope="col">Completion</th>
                <th scope="col">Cost</th>
              </tr>
            </thead>
            <tbody>
              {tiers.map((tier) => (
                <Row key={tier} label={tierLabel[tier]} totals={byTier(tier)} testId={`usage-${tier}`} />
              ))}
            </tbody>
            <tfoot>
              <Row label="Total" totals={total} testId="usage-total" />
            </tfoot>
          </table>
        </div>
      )}
      {total.local_calls > 0 && (
        <p className="field-hint" data-testid="usage-local">
          {total.local_calls === 1 ? "1 call" : `${tokens(total.local_calls)} calls`} went to models on this computer:
          they cost time rather than money, {durationText(total.local_secs * 1000)} of it today.
        </p>
      )}
      {total.unpriced_calls > total.local_calls && (
        <p className="field-hint">
          {elsewhere === 1 ? "1 call" : `${tokens(elsewhere)} calls`} went to models without a price;{" "}
          {elsewhere === 1 ? "its" : "their"} cost is not counted. Add prices under Providers to count it.
        </p>
      )}
    </>
  );
}

export function UsageCard() {
  const usage = useUsageToday();
  const titleId = useId();
  return (
    <section className="card settings-section" aria-labelledby={titleId} data-testid="usage-today">
      <div className="section-head">
        <div className="section-head-text">
          <h2 className="section-title" id={titleId}>
            Today's usage
          </h2>
          <p className="muted">Tokens and cost per tier, against the daily caps.</p>
        </div>
        {usage.data && <span className="usage-day">{dayText(usage.data.day)}</span>}
      </div>
      {usage.isPending && <Spinner label="Loading today's usage" />}
      {usage.isError && (
        <InlineError lead="Today's usage couldn't be loaded." error={usage.error} onRetry={() => void usage.refetch()} />
      )}
      {usage.data && <Usage report={usage.data} />}
    </section>
  );
}
