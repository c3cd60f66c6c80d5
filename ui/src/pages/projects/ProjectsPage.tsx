import type { ProjectSummary } from "../../bindings";
import { EmptyState } from "../../components/EmptyState";
import { PlusIcon, ProjectsIcon } from "../../components/icons";
import { InlineError } from "../../components/InlineError";
import { SkeletonList } from "../../components/Loading";
import { PageHeader } from "../../components/PageHeader";
import { RunningBadge } from "../../components/StatusBadge";
import { useProjects } from "../../projectQueries";
import { agentLabel } from "../../projectText";
import { newProjectHref, projectHref } from "../../usePage";

const steps = [
  { title: "A list of tasks", text: "Each project keeps its tasks in its own repository, where you and your agents can edit them." },
  { title: "One worktree per task", text: "An agent works on a task in a copy of the repository on a branch of its own." },
  { title: "Checked, then committed", text: "Healer runs your project's checks; only work that passes is committed." },
];

function ProjectRow({ summary }: { summary: ProjectSummary }) {
  const { project, columns } = summary;
  return (
    <li>
      <a className="project-row" href={projectHref(project.id)} data-testid="project-row" data-name={project.name}>
        <span className="cell cell-main">
          <span className="workflow-title">{project.name}</span>
          <span className="cell-detail">{project.path}</span>
        </span>
        <span className="cell project-counts">
          <span>{columns.open} open</span>
          <span>{columns.in_progress} in progress</span>
          <span>{columns.blocked} blocked</span>
          <span>{columns.closed} closed</span>
        </span>
        <span className="cell project-state">
          {summary.running > 0 ? (
            <RunningBadge />
          ) : summary.problems > 0 ? (
            <span className="status-text tone-bad">The task list needs fixing</span>
          ) : summary.unreadable ? (
            <span className="status-text tone-bad">The task list can't be read</span>
          ) : (
            <span className="cell-detail">{agentLabel[project.settings.agent ?? "builtin"]}</span>
          )}
        </span>
      </a>
    </li>
  );
}

function NoProjects() {
  return (
    <>
      <div className="card">
        <EmptyState icon={<ProjectsIcon size={28} />} title="No projects yet">
          <p>A project is a git repository with a list of tasks that coding agents work through, one at a time.</p>
          <p>Healer gives each task its own worktree, checks the result with your project's own commands, and commits it when it passes.</p>
        </EmptyState>
        <div className="empty-state-actions">
          <a className="button button-primary" href={newProjectHref} data-testid="add-first-project">
            <PlusIcon size={16} />
            Add a project
          </a>
        </div>
      </div>
      <h2 className="section-label">How Healer runs a project's tasks</h2>
      <ol className="steps">
        {steps.map((step, i) => (
          <li className="step" key={step.title}>
            <span className="step-number">{i + 1}</span>
            <h3 className="step-title">{step.title}</h3>
            <p className="muted">{step.text}</p>
          </li>
        ))}
      </ol>
    </>
  );
}

export function ProjectsPage() {
  const projects = useProjects();
  let body;
  if (projects.isPending) {
    body = <SkeletonList rows={2} label="Loading projects" />;
  } else if (projects.isError) {
    body = <InlineError lead="Projects couldn't be loaded." error={projects.error} onRetry={() => void projects.refetch()} />;
  } else if (projects.data.length === 0) {
    body = <NoProjects />;
  } else {
    body = (
      <div className="card">
        <ul className="list" aria-label="Projects">
          {projects.data.map((summary) => (
            <ProjectRow key={summary.project.id} summary={summary} />
          ))}
        </ul>
      </div>
    );
  }
  return (
    <section className="page" data-testid="page-projects">
      <PageHeader
        title="Projects"
        description="Repositories where coding agents work through your tasks."
        actions={
          <a className="button button-primary" href={newProjectHref} data-testid="new-project">
            <PlusIcon size={16} />
            Add project
          </a>
        }
      />
      {body}
    </section>
  );
}
