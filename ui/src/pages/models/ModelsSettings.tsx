import type { ProviderView, TierView } from "../../bindings";
import { SparkleIcon } from "../../components/icons";
import { InlineError } from "../../components/InlineError";
import { SkeletonList } from "../../components/Loading";
import { useProviders, useTiers } from "../../queries";
import { setupHref } from "../../usePage";
import { BudgetsCard } from "./BudgetsCard";
import { LocalModelsCard } from "./LocalModelsCard";
import { ProvidersCard } from "./ProvidersCard";
import { SteeringCard } from "./SteeringCard";
import { TiersCard } from "./TiersCard";
import { UsageCard } from "./UsageCard";

/** Said at the top while no call could be made: what Healer can't do yet, and the next step. */
function NoModelNotice({ providers, tiers }: { providers: ProviderView[]; tiers: TierView[] }) {
  if (tiers.some((t) => t.resolves_to !== null)) return null;
  return (
    <div className="card next-step models-notice" data-testid="no-model">
      <div className="next-step-icon">
        <SparkleIcon size={20} />
      </div>
      <div className="next-step-text">
        <h2 className="section-title">No model configured yet</h2>
        <p className="muted">
          Healer can still retry and notify, but it cannot repair scripts.{" "}
          {providers.length === 0 ? "Add a provider or start Ollama." : "Choose a model for a tier below."}
        </p>
        <a className="button button-primary button-small" href={setupHref} data-testid="open-setup">
          Set up a model step by step
        </a>
      </div>
    </div>
  );
}

/** Settings → Models: local models, providers and their keys, tiers, budgets, and today's usage. */
export function ModelsSettings() {
  const providers = useProviders();
  const tiers = useTiers();
  const failed = providers.error ?? tiers.error;
  return (
    <div className="models-settings" data-testid="settings-models">
      {failed ? (
        <InlineError
          lead="The model settings couldn't be loaded."
          error={failed}
          onRetry={() => {
            void providers.refetch();
            void tiers.refetch();
          }}
        />
      ) : providers.data && tiers.data ? (
        <>
          <NoModelNotice providers={providers.data} tiers={tiers.data} />
          <LocalModelsCard providers={providers.data} />
          <ProvidersCard providers={providers.data} />
          <TiersCard tiers={tiers.data} providers={providers.data} />
          <SteeringCard tiers={tiers.data} providers={providers.data} />
        </>
      ) : (
        <SkeletonList rows={3} label="Loading model settings" />
      )}
      <BudgetsCard />
      <UsageCard />
    </div>
  );
}
