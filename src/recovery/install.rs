//! A missing module is a remedy, not a question: the package that provides it (the one that
//! fixed this failure before, a known mismatch, or the import's own name) is installed into the
//! workflow's own environment, the change becomes a new minor version by Healer ("installed
//! PyYAML 6.0.2"), and the workflow runs again — with no model. When the installation fails,
//! an ENVIRONMENT checkpoint names the package and the installer's exact error, and offers
//! "Try another package name…" and Pause.

use async_trait::async_trait;

use crate::checkpoint::{
    Checkpoint, CheckpointAction, CheckpointOption, CheckpointTrigger, NewCheckpoint, Situation,
};
use crate::deps::{
    self, failing_import_line, missing_module, package_for, parse_requirements, read_imports,
    requirements_text, Ecosystem, PackageQuestion, Requirement, SETUP_FAILED,
};
use crate::error::Result;
use crate::events::Event;
use crate::failure::{Failure, FailureClass};
use crate::heal::{
    not_a_script_run, HealContext, Remedy, RemedyReport, RemedyStatus, ScriptFailure,
};
use crate::services::{join_words, Services};
use crate::store::{FixResult, Store};
use crate::workflow::{Author, ScriptVersion, Version, Workflow};

/// The lead of the short report an environment checkpoint ends with (the window shows what
/// follows it as a report).
pub const ENVIRONMENT_REPORT: &str = "What this workflow's environment has:";

/// Install the package a missing module needs.
pub struct InstallModule;

#[async_trait]
impl Remedy for InstallModule {
    fn name(&self) -> &'static str {
        "install_module"
    }

    async fn apply(
        &self,
        cx: &HealContext<'_>,
        _heal_id: i64,
        failure: &Failure,
    ) -> Result<RemedyReport> {
        let Some(ScriptFailure {
            services,
            workflow_id,
            run_id,
        }) = cx.script_run(failure)
        else {
            return Ok(not_a_script_run());
        };
        if failure.class != FailureClass::Environment {
            return Ok(pass("not something missing"));
        }
        let store = &services.store;
        let workflow = store.workflow(workflow_id)?;
        let Some(ecosystem) = Ecosystem::of(&workflow.runtime) else {
            return Ok(pass("a shell workflow uses the machine's own programs"));
        };
        let run = store.run(run_id)?;
        let version = store.version(workflow_id, run.version)?;
        if failure.evidence.message.starts_with(SETUP_FAILED) {
            let c = ask_about_setup(services, &workflow, ecosystem, &version, run_id, failure)?;
            return Ok(contained(format!(
                "its packages could not be installed; checkpoint {} asks the person",
                c.id
            )));
        }
        let said = format!(
            "{}\n{}",
            failure.summary(),
            store
                .run_detail(run_id)?
                .attempts
                .last()
                .map(|a| a.stderr.clone())
                .unwrap_or_default()
        );
        let Some(module) = missing_module(ecosystem, &said) else {
            return Ok(pass("not a missing module"));
        };
        let missing = MissingImport {
            workflow: &workflow,
            ecosystem,
            version: &version,
            module: &module,
            signature: &failure.signature,
            run_id: Some(run_id),
            replaces: None,
        };
        Ok(match install_missing(services, &missing, None).await? {
            Installed::Saved { version, comment } => contained(format!(
                "{comment} into the workflow's own environment as version {version}; running it again, at zero tokens"
            )),
            Installed::Asked { checkpoint } => contained(format!(
                "the package for {module} could not be installed; checkpoint {} asks the person",
                checkpoint.id
            )),
            Installed::Stale { active } => pass(&format!(
                "the workflow is on version {active} now: nothing was installed for the older one"
            )),
        })
    }
}

/// A missing import of a workflow's version.
pub(crate) struct MissingImport<'a> {
    pub workflow: &'a Workflow,
    pub ecosystem: Ecosystem,
    /// The version that failed: its code and its packages.
    pub version: &'a ScriptVersion,
    /// The top-level module (Python) or package (Node) it could not find.
    pub module: &'a str,
    pub signature: &'a str,
    pub run_id: Option<i64>,
    /// The package that could not be installed for it, which a person's choice replaces.
    pub replaces: Option<&'a str>,
}

/// What installing for a missing import came to.
pub(crate) enum Installed {
    /// A new minor version declares it, and a run of it is queued.
    Saved { version: Version, comment: String },
    /// It could not be installed (or should not be tried again): the person is asked.
    Asked { checkpoint: Box<Checkpoint> },
    /// A person saved another major meanwhile: nothing was stored.
    Stale { active: Version },
}

/// Install the package for `missing` — `chosen` by the person, else the one memory, the table
/// or the import's own name gives — plus any other import of the script its environment lacks;
/// then store the new minor version and queue its run, or ask.
pub(crate) async fn install_missing(
    services: &Services,
    missing: &MissingImport<'_>,
    chosen: Option<&str>,
) -> Result<Installed> {
    let store = &services.store;
    let MissingImport {
        workflow,
        ecosystem,
        version,
        module,
        signature,
        replaces,
        ..
    } = *missing;
    let declared = parse_requirements(ecosystem, &version.requirements.join("\n"))
        .map_err(crate::error::Error::InvalidInput)?;
    let package = match chosen {
        Some(name) => name.to_string(),
        None => {
            let max = store
                .setting::<u32>(deps::MAX_INSTALLS)?
                .unwrap_or(deps::DEFAULT_MAX_INSTALLS);
            if store.installs_since_green(workflow.id)? >= max {
                let why = format!(
                    "Healer installed {max} packages for it since it last ran well, and it still cannot import {module}."
                );
                return ask(services, missing, module, &why, "").await;
            }
            choose_package(store, ecosystem, module, Some(signature))?
        }
    };
    let same = |r: &Requirement| deps::same_package(ecosystem, &r.name, &package);
    if chosen.is_none() && declared.iter().any(same) {
        let why = format!(
            "{package} is installed in its environment, yet the script still cannot import {module}: the module may come from another package."
        );
        return ask(services, missing, &package, &why, "").await;
    }
    // Other imports its environment lacks go in the same installation: one version, one run.
    let folder = services.paths.workflow_dir(workflow.id);
    let mut extras: Vec<Requirement> = Vec::new();
    if chosen.is_none() {
        for import in read_imports(ecosystem, &version.code, &folder)
            .await
            .unwrap_or_default()
        {
            if import.installed || import.module == module {
                continue;
            }
            let name = choose_package(store, ecosystem, &import.module, None)?;
            let known = |r: &Requirement| deps::same_package(ecosystem, &r.name, &name);
            if !declared.iter().any(known) && !extras.iter().any(known) && name != package {
                extras.push(Requirement::new(&name, ""));
            }
        }
    }
    // A person's name for the package replaces the one that could not be installed.
    let kept: Vec<Requirement> = declared
        .into_iter()
        .filter(|r| !replaces.is_some_and(|q| deps::same_package(ecosystem, &r.name, q)))
        .collect();
    let mut wanted = kept.clone();
    wanted.push(Requirement::new(&package, ""));
    let with_extras: Vec<Requirement> = wanted.iter().chain(extras.iter()).cloned().collect();

    let lock = services.environments.lock(workflow.id).await;
    let mut built = services
        .install_requirements(workflow, ecosystem, &with_extras, false)
        .await?;
    let mut installed = with_extras;
    if !built.ok && !extras.is_empty() {
        // One wrong guess among the other imports must not keep the missing one out.
        built = services
            .install_requirements(workflow, ecosystem, &wanted, false)
            .await?;
        installed = wanted;
    }
    drop(lock);
    if !built.ok {
        let error = built.error.clone().unwrap_or_default();
        let why = format!(
            "Healer tried to install the package {package} into this workflow's own environment, and {} said:\n{error}",
            ecosystem.tool()
        );
        return ask(services, missing, &package, &why, &built.interpreter).await;
    }
    // The new packages are declared at the version that was installed, so 1.1 says exactly
    // what it runs with and the next run installs nothing.
    let added: Vec<&Requirement> = installed.iter().skip(kept.len()).collect();
    let pinned: Vec<Requirement> = installed
        .iter()
        .map(|r| {
            match (
                added.contains(&r),
                built.installed_version(ecosystem, &r.name),
            ) {
                (true, Some(v)) => Requirement::new(&r.name, &pin(ecosystem, &v)),
                _ => r.clone(),
            }
        })
        .collect();
    let named: Vec<String> = added
        .iter()
        .map(|r| match built.installed_version(ecosystem, &r.name) {
            Some(v) => format!("{} {v}", r.name),
            None => r.name.clone(),
        })
        .collect();
    let comment = format!("installed {}", join_words(&named));
    let text = requirements_text(ecosystem, &pinned);
    let result = store.save_package_fix(
        workflow.id,
        version.version.major,
        &text,
        &comment,
        Some((signature, ecosystem.as_str(), module, &package)),
        &built.log,
    )?;
    match result {
        FixResult::Applied { version, .. } => {
            store.set_environment_requirements(workflow.id, &text)?;
            services.bus.emit(Event::VersionSaved {
                workflow_id: workflow.id,
                title: workflow.title.clone(),
                version,
                author: Author::Healer,
                comment: comment.clone(),
            })?;
            services.wake.scheduler.notify_one();
            Ok(Installed::Saved { version, comment })
        }
        FixResult::Stale { active } => Ok(Installed::Stale { active }),
    }
}

/// The package for an import: the one that fixed it before, else the table's.
pub fn choose_package(
    store: &Store,
    ecosystem: Ecosystem,
    module: &str,
    signature: Option<&str>,
) -> Result<String> {
    if let Some(learned) = store.learned_package(ecosystem.as_str(), module, signature)? {
        return Ok(learned);
    }
    Ok(package_for(ecosystem, module)
        .map(|t| t.package().to_string())
        .unwrap_or_else(|| module.to_string()))
}

fn pin(ecosystem: Ecosystem, version: &str) -> String {
    match ecosystem {
        Ecosystem::Python => format!("=={version}"),
        Ecosystem::Node => version.to_string(),
    }
}

/// The ENVIRONMENT checkpoint about a package: what failed, in the installer's words, and a
/// short report — the interpreter, the environment's packages, the one failing import.
async fn ask(
    services: &Services,
    missing: &MissingImport<'_>,
    package: &str,
    why: &str,
    interpreter: &str,
) -> Result<Installed> {
    let MissingImport {
        workflow,
        ecosystem,
        version,
        module,
        signature,
        run_id,
        ..
    } = *missing;
    let folder = services.paths.workflow_dir(workflow.id);
    let interpreter = if interpreter.is_empty() {
        deps::interpreter_version(ecosystem, &folder).await
    } else {
        interpreter.to_string()
    };
    let run = run_id.map(|r| format!(" (run {r})")).unwrap_or_default();
    let context = format!(
        "\u{201c}{}\u{201d} cannot import {module}{run}.\n\n{why}\n\n{}",
        workflow.title,
        report(services, workflow.id, version, module, &interpreter)?
    );
    let options = vec![
        CheckpointOption::new(
            "Try another package name\u{2026}",
            &format!(
                "Name the {} package that provides {module}: Healer installs it into this workflow's environment and runs it again",
                ecosystem.tool()
            ),
            CheckpointAction::InstallPackage,
        ),
        CheckpointOption::new(
            "Pause",
            "Stop running it until you resume it",
            CheckpointAction::Pause,
        ),
    ];
    let checkpoint = services.raise_checkpoint(NewCheckpoint {
        project_task: None,
        trigger: CheckpointTrigger::Environment,
        affected: Vec::new(),
        workflow_id: Some(workflow.id),
        run_id,
        task_id: None,
        signature: Some(signature.to_string()),
        context,
        options,
        situation: Some(Situation {
            title: "A package could not be installed".to_string(),
            recommend: CheckpointAction::Pause,
            why: "it cannot run without the module; pause it, or name the package that provides it"
                .to_string(),
            past: None,
        }),
    })?;
    services.store.insert_package_question(
        checkpoint.id,
        &PackageQuestion {
            workflow_id: workflow.id,
            module: module.to_string(),
            package: package.to_string(),
            signature: signature.to_string(),
        },
    )?;
    Ok(Installed::Asked {
        checkpoint: Box::new(checkpoint),
    })
}

/// The packages a version declares could not be installed before its run: ask to try again or
/// pause.
fn ask_about_setup(
    services: &Services,
    workflow: &Workflow,
    ecosystem: Ecosystem,
    version: &ScriptVersion,
    run_id: i64,
    failure: &Failure,
) -> Result<Checkpoint> {
    let record = services.store.environment(workflow.id)?;
    let error = record
        .as_ref()
        .and_then(|r| r.error.clone())
        .unwrap_or_else(|| failure.evidence.message.clone());
    let interpreter = record.map(|r| r.interpreter).unwrap_or_default();
    let context = format!(
        "Before run {run_id} of \u{201c}{}\u{201d}, Healer installed the packages version {} declares ({}), and {} said:\n{error}\n\n{}",
        workflow.title,
        version.version,
        version.requirements.join(", "),
        ecosystem.tool(),
        report(services, workflow.id, version, "", &interpreter)?
    );
    services.raise_checkpoint(NewCheckpoint {
        project_task: None,
        trigger: CheckpointTrigger::Environment,
        affected: Vec::new(),
        workflow_id: Some(workflow.id),
        run_id: Some(run_id),
        task_id: None,
        signature: Some(failure.signature.clone()),
        context,
        options: vec![
            CheckpointOption::new(
                "Try again",
                "Install the packages again and run it (a passing network problem clears)",
                CheckpointAction::Proceed,
            ),
            CheckpointOption::new(
                "Pause",
                "Stop running it until you resume it",
                CheckpointAction::Pause,
            ),
        ],
        situation: Some(Situation {
            title: "Its packages could not be installed".to_string(),
            recommend: CheckpointAction::Pause,
            why: "the same packages will fail the same way; change them in a new version of the script, or try again once the network is back".to_string(),
            past: None,
        }),
    })
}

/// The short report: the interpreter, the environment's own packages (never the whole
/// machine's), and the one failing import.
fn report(
    services: &Services,
    workflow_id: i64,
    version: &ScriptVersion,
    module: &str,
    interpreter: &str,
) -> Result<String> {
    let lock = services
        .store
        .environment(workflow_id)?
        .filter(|r| r.ok)
        .map(|r| r.lock)
        .unwrap_or_default();
    let packages: Vec<&str> = lock.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut lines = vec![ENVIRONMENT_REPORT.to_string()];
    if !interpreter.is_empty() {
        lines.push(format!("Interpreter: {interpreter}"));
    }
    lines.push(if packages.is_empty() {
        "Its packages: none installed yet".to_string()
    } else {
        format!("Its packages: {}", packages.join(", "))
    });
    if let Some((n, line)) =
        failing_import_line(&version.code, module).filter(|_| !module.is_empty())
    {
        lines.push(format!("The failing import (line {n}): {line}"));
    }
    Ok(lines.join("\n"))
}

fn pass(why: &str) -> RemedyReport {
    RemedyReport {
        status: RemedyStatus::NotResolved,
        detail: why.to_string(),
    }
}

fn contained(detail: String) -> RemedyReport {
    RemedyReport {
        status: RemedyStatus::Contained,
        detail,
    }
}
