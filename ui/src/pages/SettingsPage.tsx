import type { AppInfo } from "../bindings";
import { FolderIcon } from "../components/icons";
import { InlineError } from "../components/InlineError";
import { Spinner } from "../components/Loading";
import { PageHeader } from "../components/PageHeader";
import { useOpenLogFolder } from "../queries";
import { settingsHref, settingsSections, type SettingsSection } from "../usePage";
import { BackgroundSettings } from "./BackgroundSettings";
import { CheckHealing } from "./CheckHealing";
import { ClusterSettings } from "./ClusterSettings";
import { EditorSetting } from "./EditorSetting";
import { ModelsSettings } from "./models/ModelsSettings";

function About({ info }: { info: AppInfo }) {
  const rows: [string, string, boolean][] = [
    // The data's format number goes with the version, for a support question, not as a row of its own.
    ["Version", `${info.version} (data format ${info.schema_version})`, false],
    ["Data folder", info.data_dir, true],
    ["Database", info.db_path, true],
  ];
  return (
    <section className="card settings-section" aria-labelledby="about-title">
      <h2 className="section-title" id="about-title">About</h2>
      <dl className="facts">
        {rows.map(([label, value, isPath]) => (
          <div className="fact" key={label}>
            <dt>{label}</dt>
            <dd className={isPath ? "path" : undefined}>{value}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

function Logs({ logDir }: { logDir: string }) {
  const open = useOpenLogFolder();
  return (
    <section className="card settings-section" aria-labelledby="logs-title">
      <h2 className="section-title" id="logs-title">Logs</h2>
      <p className="muted">Healer keeps a log of everything it does. It helps when something needs explaining.</p>
      <div className="path-row">
        <code className="path">{logDir}</code>
        <button type="button" className="button" onClick={() => open.mutate()} disabled={open.isPending}>
          {open.isPending ? <Spinner /> : <FolderIcon size={16} />}
          Open log folder
        </button>
      </div>
      {open.isError && <InlineError lead="The log folder couldn't be opened." error={open.error} />}
    </section>
  );
}

const sectionLabels: Record<SettingsSection, string> = { general: "General", models: "Models", computers: "More computers" };

const sectionDescriptions: Record<SettingsSection, string> = {
  general: "How Healer runs in the background, this installation, its logs, and a check that healing works.",
  models: "The language models Healer repairs scripts with, and how much it may use them.",
  computers: "Workflows that run on other computers, through a Temporal cluster, and the computers taking their work.",
};

function SectionLinks({ current }: { current: SettingsSection }) {
  return (
    <nav className="tabs" aria-label="Settings sections">
      {settingsSections.map((section) => (
        <a
          key={section}
          className="tab"
          href={settingsHref(section)}
          aria-current={section === current ? "page" : undefined}
          data-testid={`settings-section-${section}`}
        >
          {sectionLabels[section]}
        </a>
      ))}
    </nav>
  );
}

export function SettingsPage({ info, section }: { info: AppInfo; section: SettingsSection }) {
  return (
    <section className="page" data-testid="page-settings">
      <PageHeader title="Settings" description={sectionDescriptions[section]} />
      <SectionLinks current={section} />
      {section === "general" ? (
        <>
          <BackgroundSettings />
          <EditorSetting />
          <About info={info} />
          <Logs logDir={info.log_dir} />
          <CheckHealing />
        </>
      ) : section === "models" ? (
        <ModelsSettings />
      ) : (
        <ClusterSettings />
      )}
    </section>
  );
}
