//! The engine's API for each workflow's own environment: what it declares and has installed,
//! the packages a script would need (offered when it is saved), and Reinstall.

use super::Handle;
use crate::deps::{
    self, locked_version, parse_requirements, read_imports, requirements_text, Dependencies,
    Ecosystem, EnvironmentState, PackageFix, PackageRow, ProposalSource, ProposedPackage,
    Requirement,
};
use crate::error::{Error, Result};
use crate::paths::Paths;
use crate::recovery::choose_package;
use crate::store::Store;
use crate::workflow::Runtime;

impl Handle {
    /// The Dependencies section: the packages the active version declares, what is installed
    /// (the lock), and what the last installation printed.
    pub fn dependencies(&self, id: i64) -> Result<Dependencies> {
        dependencies_in(&self.services.store, &self.services.paths, id)
    }

    /// Install the active version's packages again, into a fresh environment.
    pub async fn reinstall_dependencies(&self, id: i64) -> Result<Dependencies> {
        let workflow = self.services.store.workflow(id)?;
        let Some(ecosystem) = Ecosystem::of(&workflow.runtime) else {
            return Err(Error::InvalidInput(format!(
                "\u{201c}{}\u{201d} is a shell workflow: it uses the programs installed on this machine and has no packages of its own",
                workflow.title
            )));
        };
        let active = self.services.store.active_version(id)?;
        let requirements = parse_requirements(ecosystem, &active.requirements.join("\n"))
            .map_err(Error::InvalidInput)?;
        let lock = self.services.environments.lock(id).await;
        self.services
            .install_requirements(&workflow, ecosystem, &requirements, true)
            .await?;
        drop(lock);
        self.dependencies(id)
    }

    /// The packages a script needs that its workflow's environment lacks (see
    /// [`propose_packages_in`]). Offered when a person saves; they confirm.
    pub async fn propose_packages(
        &self,
        runtime: &Runtime,
        code: &str,
        workflow_id: Option<i64>,
    ) -> Result<Vec<ProposedPackage>> {
        propose_packages_in(
            &self.services.store,
            &self.services.paths,
            runtime,
            code,
            workflow_id,
        )
        .await
    }

    /// Packages installed for an error signature (the Memory page).
    pub fn package_fixes(&self, signature: &str) -> Result<Vec<PackageFix>> {
        self.services.store.package_fixes(signature)
    }
}

/// The Dependencies section from the store and the workflow's folder (the CLI reads it
/// without an engine).
pub fn dependencies_in(store: &Store, paths: &Paths, id: i64) -> Result<Dependencies> {
    let workflow = store.workflow(id)?;
    let active = store.active_version(id)?;
    let ecosystem = Ecosystem::of(&workflow.runtime);
    let folder = paths.workflow_dir(id);
    let record = store.environment(id)?;
    let lock: Vec<String> = record
        .as_ref()
        .filter(|r| r.ok)
        .map(|r| r.lock.lines().map(str::to_string).collect())
        .unwrap_or_default();
    let packages = match ecosystem {
        Some(e) => parse_requirements(e, &active.requirements.join("\n"))
            .unwrap_or_default()
            .into_iter()
            .map(|r| PackageRow {
                installed: locked_version(e, &lock, &r.name),
                name: r.name,
                wanted: r.spec,
            })
            .collect(),
        None => Vec::new(),
    };
    let wanted = active.requirements.join("\n");
    let exists = ecosystem.is_some_and(|e| deps::environment_exists(e, &folder));
    let state = match (&record, ecosystem) {
        (_, None) => EnvironmentState::Machine,
        (_, Some(_)) if wanted.is_empty() && !exists => EnvironmentState::Machine,
        (None, _) => EnvironmentState::NotInstalled,
        (Some(r), _) if !r.ok => EnvironmentState::Failed,
        (Some(r), _) if r.requirements != wanted || !exists => EnvironmentState::Outdated,
        (Some(_), _) => EnvironmentState::Ready,
    };
    Ok(Dependencies {
        workflow_id: id,
        ecosystem,
        state,
        packages,
        lock,
        log: record.as_ref().map(|r| r.log.clone()).unwrap_or_default(),
        error: record.as_ref().and_then(|r| r.error.clone()),
        interpreter: record
            .as_ref()
            .map(|r| r.interpreter.clone())
            .unwrap_or_default(),
        built_at: record.map(|r| r.built_at),
        location: ecosystem
            .map(|e| folder.join(e.env_dir()).display().to_string())
            .unwrap_or_default(),
    })
}

/// The packages a script needs that its workflow's environment lacks: its imports that are
/// neither the standard library, nor files beside it, nor installed — each with the package
/// Healer would install (the one that fixed this import before, a known name mismatch, or the
/// import's own name). `workflow_id`: none for a workflow being created.
pub async fn propose_packages_in(
    store: &Store,
    paths: &Paths,
    runtime: &Runtime,
    code: &str,
    workflow_id: Option<i64>,
) -> Result<Vec<ProposedPackage>> {
    let Some(ecosystem) = Ecosystem::of(runtime) else {
        return Ok(Vec::new());
    };
    let (folder, declared) = match workflow_id {
        Some(id) => {
            let active = store.active_version(id)?;
            let declared =
                parse_requirements(ecosystem, &active.requirements.join("\n")).unwrap_or_default();
            (paths.workflow_dir(id), declared)
        }
        // Not created yet: nothing beside it, nothing installed (the folder does not exist).
        None => (paths.workflows_dir().join("new"), Vec::new()),
    };
    // A script that does not parse gets the syntax check's message instead.
    let Ok(imports) = read_imports(ecosystem, code, &folder).await else {
        return Ok(Vec::new());
    };
    let mut proposed: Vec<ProposedPackage> = Vec::new();
    for import in imports.into_iter().filter(|i| !i.installed) {
        let package = choose_package(store, ecosystem, &import.module, None)?;
        let declared_already = declared
            .iter()
            .any(|r| deps::same_package(ecosystem, &r.name, &package));
        if declared_already || proposed.iter().any(|p| p.package == package) {
            continue;
        }
        let source = if store
            .learned_package(ecosystem.as_str(), &import.module, None)?
            .is_some()
        {
            ProposalSource::Memory
        } else if deps::package_for(ecosystem, &import.module)
            .is_some_and(|t| matches!(t, deps::TableMatch::Mismatch(_)))
        {
            ProposalSource::Table
        } else {
            ProposalSource::SameName
        };
        proposed.push(ProposedPackage {
            module: import.module,
            package,
            line: import.line,
            source,
        });
    }
    Ok(proposed)
}

/// A person's list of packages, checked and written the way versions keep it; `None` for a
/// workflow without packages of its own (a shell one), which may not declare any.
pub(super) fn checked_requirements(runtime: &Runtime, lines: &[String]) -> Result<String> {
    let lines: Vec<&str> = lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    let Some(ecosystem) = Ecosystem::of(runtime) else {
        if lines.is_empty() {
            return Ok(String::new());
        }
        return Err(Error::InvalidInput(
            "a shell workflow uses the programs installed on this machine: it cannot declare packages".to_string(),
        ));
    };
    let mut list: Vec<Requirement> = Vec::new();
    for line in lines {
        let requirement = Requirement::parse(ecosystem, line).map_err(Error::InvalidInput)?;
        if !list
            .iter()
            .any(|r| deps::same_package(ecosystem, &r.name, &requirement.name))
        {
            list.push(requirement);
        }
    }
    Ok(requirements_text(ecosystem, &list))
}
