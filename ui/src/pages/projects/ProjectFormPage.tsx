// Adding a project: choose its folder, see what Healer makes of it, confirm or edit what it
// detected. Editing one: the same settings, for a project Healer has already.
import { useEffect, useId, useState } from "react";
import { Dialog } from "../../components/Dialog";
import type { FolderCheck, ProjectInput } from "../../bindings";
import { ArrowLeftIcon, CheckIcon, FolderIcon } from "../../components/icons";
import { InlineError } from "../../components/InlineError";
import { SkeletonList, Spinner } from "../../components/Loading";
import { PageHeader } from "../../components/PageHeader";
import { pickFolder } from "../../folderPicker";
import { useAddProject, useFolderCheck, useHealerConfig, useInitFolder, useProject, useRemoveProject, useSaveHealerConfig, useUpdateProject } from "../../projectQueries";
import { navigate, pageHref, projectHref, setLeaveGuard } from "../../usePage";
import { HealerSettings, type HealerForm } from "./HealerSettings";
import { formFrom } from "./projectFormModel";
import { ProjectSettingsForm } from "./ProjectSettingsForm";

function FolderState({ check, onInit, initing, initError }: { check: FolderCheck; onInit: () => void; initing: boolean; initError: unknown }) {
  const { repo } = check;
  const ready = repo.state.kind === "ready";
  const canInit = repo.state.kind === "not_a_repository" || repo.state.kind === "no_commits";
  return (
    <div className={ready ? "folder-state good" : "folder-state bad"} data-testid="folder-state" data-state={repo.state.kind}>
      <p className="folder-message">
        {ready && <CheckIcon size={16} />}
        {repo.message}
      </p>
      {check.detection && check.detection.found.length > 0 && (
        <p className="muted">Healer recognised {check.detection.found.join(", ")}.</p>
      )}
      {repo.notes.map((note) => (
        <p className="folder-note" key={note}>
          {note}
        </p>
      ))}
      {check.already_added && (
        <p className="folder-note">
          This folder is already the project “{check.already_added}”.
        </p>
      )}
      {canInit && (
        <button type="button" className="button" onClick={onInit} disabled={initing} data-testid="init-repo">
          {initing && <Spinner />}
          {repo.state.kind === "no_commits" ? "Commit the files in it" : "Make it a git repository"}
        </button>
      )}
      {initError !== null && initError !== undefined && <InlineError lead="That did not work." error={initError} />}
    </div>
  );
}

/** How long typing must pause before the typed folder is looked at. */
const LOOK_AFTER_MS = 600;

function FolderPicker({ path, onPath }: { path: string; onPath: (path: string) => void }) {
  const id = useId();
  const [text, setText] = useState(path);
  // A typed path is looked at once the typing pauses (Enter or leaving the field: at once).
  useEffect(() => {
    const typed = text.trim();
    if (!typed || typed === path) return;
    const timer = window.setTimeout(() => onPath(typed), LOOK_AFTER_MS);
    return () => window.clearTimeout(timer);
  }, [text, path, onPath]);
  const [pickError, setPickError] = useState<unknown>(null);
  async function choose() {
    setPickError(null);
    try {
      const chosen = await pickFolder();
      if (chosen) {
        setText(chosen);
        onPath(chosen);
      }
    } catch (error) {
      setPickError(error);
    }
  }
  return (
    <div className="field">
      <label className="field-label" htmlFor={id}>
        The repository's folder
      </label>
      <div className="folder-picker">
        <input
          id={id}
          className="input mono"
          value={text}
          onChange={(e) => setText(e.target.value)}
          onBlur={() => onPath(text.trim())}
          onKeyDown={(e) => e.key === "Enter" && (e.preventDefault(), onPath(text.trim()))}
          placeholder="/home/you/code/my-app"
          spellCheck={false}
          data-testid="project-path"
        />
        <button type="button" className="button" onClick={() => void choose()} data-testid="pick-folder">
          <FolderIcon size={16} />
          Choose…
        </button>
      </div>
      <span className="field-hint">Type or paste the folder's path, or choose it; Healer looks at it as soon as you stop typing.</span>
      {pickError !== null && <InlineError lead="The folder dialog did not open." error={pickError} />}
    </div>
  );
}

export function AddProjectPage() {
  const [path, setPath] = useState("");
  const check = useFolderCheck(path);
  const init = useInitFolder();
  const add = useAddProject();
  const proposal = check.data?.proposal ?? null;
  return (
    <section className="page" data-testid="page-add-project">
      <a className="back-link" href={pageHref("projects")}>
        <ArrowLeftIcon size={16} /> Projects
      </a>
      <PageHeader title="Add a project" description="Choose a git repository; Healer looks at what it holds and proposes the rest." />
      <div className="card folder-card">
        <FolderPicker path={path} onPath={setPath} />
        {check.isFetching && !check.data && <SkeletonList rows={1} label="Looking at the folder" />}
        {check.isError && <InlineError lead="The folder could not be looked at." error={check.error} />}
        {check.data && (
          <FolderState check={check.data} onInit={() => init.mutate(path)} initing={init.isPending} initError={init.error} />
        )}
      </div>
      {proposal && check.data?.detection && (
        <ProjectSettingsForm
          key={`${proposal.path}:${check.dataUpdatedAt}`}
          initial={formFrom(proposal)}
          agents={check.data.detection.agents}
          projectId={null}
          saveLabel="Add project"
          saving={add.isPending}
          saveError={add.error}
          onSave={(input) =>
            add.mutate(input, {
              onSuccess: (project) => {
                setLeaveGuard(null);
                navigate(projectHref(project.id));
              },
            })
          }
          cancelHref={pageHref("projects")}
        />
      )}
    </section>
  );
}

/** Forget a project: its repository, files and branches stay as they are. Asks first. */
function RemoveProject({ id, name }: { id: number; name: string }) {
  const remove = useRemoveProject();
  const [asking, setAsking] = useState(false);
  return (
    <section className="card danger-zone" data-testid="remove-project-section">
      <div>
        <h2 className="section-title">Remove this project from Healer</h2>
        <p className="muted">Healer forgets its tasks' history and its worktrees. The repository, its files and its branches stay as they are.</p>
      </div>
      <button type="button" className="button button-danger" onClick={() => setAsking(true)} data-testid="remove-project">
        Remove project
      </button>
      {remove.isError && <InlineError lead="The project was not removed." error={remove.error} />}
      {asking && (
        <Dialog
          title={`Remove \u201c${name}\u201d from Healer?`}
          tone="danger"
          onCancel={() => setAsking(false)}
          actions={
            <>
              <button type="button" className="button" data-autofocus onClick={() => setAsking(false)}>
                Keep it
              </button>
              <button
                type="button"
                className="button button-danger"
                disabled={remove.isPending}
                data-testid="remove-project-confirm"
                onClick={() =>
                  remove.mutate(id, {
                    onSuccess: () => {
                      setLeaveGuard(null);
                      navigate(pageHref("projects"));
                    },
                    onSettled: () => setAsking(false),
                  })
                }
              >
                {remove.isPending && <Spinner />}
                Remove
              </button>
            </>
          }
        >
          <p>Healer stops watching it and forgets its tasks' history, the agents' worktrees and their settings for it. The repository, its files and its branches are not touched; you can add it again any time.</p>
        </Dialog>
      )}
    </section>
  );
}

export function EditProjectPage({ id }: { id: number }) {
  const project = useProject(id);
  const check = useFolderCheck(project.data?.project.path ?? "");
  const update = useUpdateProject(id);
  const healer = useHealerConfig(id);
  const saveHealer = useSaveHealerConfig(id);
  // Healer's settings as edited, until saved with the rest (null: as loaded).
  const [healerEdit, setHealerEdit] = useState<HealerForm | null>(null);
  if (project.isPending || check.isPending || healer.isPending) return <SkeletonList rows={3} label="Loading the project" />;
  if (project.isError) return <InlineError lead="The project couldn't be loaded." error={project.error} />;
  const p = project.data.project;
  const healerForm = healerEdit ?? (healer.data as HealerForm | undefined) ?? null;
  const saveProject = (input: ProjectInput) =>
    update.mutate(input, {
      onSuccess: () => {
        // Saved: leaving is no longer losing anything.
        setLeaveGuard(null);
        navigate(projectHref(id));
      },
    });
  return (
    <section className="page" data-testid="page-edit-project">
      <a className="back-link" href={projectHref(id)}>
        <ArrowLeftIcon size={16} /> {p.name}
      </a>
      <PageHeader title="Project settings" description={p.path} />
      <ProjectSettingsForm
        initial={formFrom({ path: p.path, name: p.name, settings: p.settings })}
        agents={check.data?.detection?.agents ?? []}
        projectId={id}
        saveLabel="Save"
        saving={update.isPending || saveHealer.isPending}
        saveError={saveHealer.error ?? update.error}
        // One Save for the whole page: Healer's settings first, then the project's.
        onSave={(input) => (healerForm ? saveHealer.mutate(healerForm, { onSuccess: () => saveProject(input) }) : saveProject(input))}
        cancelHref={projectHref(id)}
        moreDirty={healerEdit !== null && JSON.stringify(healerEdit) !== JSON.stringify(healer.data)}
        more={
          healerForm ? (
            <HealerSettings value={healerForm} onChange={setHealerEdit} />
          ) : (
            <InlineError lead="Healer's settings for this project couldn't be loaded." error={healer.error} />
          )
        }
      />
      <RemoveProject id={id} name={p.name} />
    </section>
  );
}
