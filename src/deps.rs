//! Each workflow's own dependencies: the packages a version declares, the environment they are
//! installed into (a venv under the workflow's folder for Python, its own `node_modules` for
//! Node; shell workflows use the machine), the imports read from a script, and the missing
//! module named by a failure. No store here: the store keeps these shapes, `services` builds
//! environments, and the recovery manager's remedy installs what a run found missing.

mod imports;
mod installer;
pub use installer::contained;
mod missing;
mod names;
mod node;
mod overlay;
mod python;
mod requirement;

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::memory::FixVerdict;
use crate::workflow::Runtime;

pub use imports::{read_imports, Import};
pub use missing::{failing_import_line, missing_module};
pub use names::{package_for, valid_package_name, TableMatch};
pub use overlay::run_environment;
pub use requirement::{parse_requirements, requirements_text, Requirement};

/// How a run's failure begins when the packages its version declares could not be installed
/// (the script never ran); the missing-module remedy knows it by this.
pub const SETUP_FAILED: &str = "the packages this version declares could not be installed";

/// The folder of a Python workflow's virtual environment, inside its folder.
pub const VENV_DIR: &str = ".venv";
/// A Node workflow's packages, inside its folder (where Node looks for them).
pub const NODE_MODULES_DIR: &str = "node_modules";

/// Settings key: how long one installation may take, in seconds.
pub const INSTALL_TIMEOUT: &str = "environment.install_timeout_secs";
pub const DEFAULT_INSTALL_TIMEOUT_SECS: u64 = 300;
/// Settings key: packages the missing-module remedy installs for one workflow between two green
/// runs before it asks the person instead.
pub const MAX_INSTALLS: &str = "environment.max_installs";
pub const DEFAULT_MAX_INSTALLS: u32 = 3;

/// The package world a runtime installs from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Ecosystem {
    /// PyPI, installed with pip into the workflow's venv.
    Python,
    /// The npm registry, installed with npm into the workflow's node_modules.
    Node,
}

impl Ecosystem {
    /// `None` for a shell or custom command line: those use what the machine has.
    pub fn of(runtime: &Runtime) -> Option<Ecosystem> {
        match runtime {
            Runtime::Python3 => Some(Ecosystem::Python),
            Runtime::Node => Some(Ecosystem::Node),
            Runtime::Bash | Runtime::Custom { .. } => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Ecosystem::Python => "python",
            Ecosystem::Node => "node",
        }
    }

    /// The installer, as a person knows it.
    pub fn tool(self) -> &'static str {
        match self {
            Ecosystem::Python => "pip",
            Ecosystem::Node => "npm",
        }
    }

    /// Where the environment lives inside the workflow's folder.
    pub fn env_dir(self) -> &'static str {
        match self {
            Ecosystem::Python => VENV_DIR,
            Ecosystem::Node => NODE_MODULES_DIR,
        }
    }
}

/// How a workflow's environment stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum EnvironmentState {
    /// A shell workflow, or one that declares no packages: it uses the machine.
    Machine,
    /// Packages are declared but were never installed: the next run installs them.
    NotInstalled,
    /// Installed as the active version declares.
    Ready,
    /// The active version declares other packages than were installed: the next run installs.
    Outdated,
    /// The last installation failed.
    Failed,
}

/// The environment as last built, as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvironmentRecord {
    /// The requirements it was built from.
    pub requirements: String,
    pub ok: bool,
    /// Every installed package, pinned, one a line.
    pub lock: String,
    pub log: String,
    pub error: Option<String>,
    pub interpreter: String,
    pub built_at: String,
}

/// One declared package, with the version that is installed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct PackageRow {
    pub name: String,
    /// What the version asks for: "==6.0.2", "^1.3.0", or "" for any.
    pub wanted: String,
    /// The version the lock says is installed.
    pub installed: Option<String>,
}

/// The Dependencies section of a workflow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Dependencies {
    pub workflow_id: i64,
    /// `None` for a shell workflow: it has no environment of its own.
    pub ecosystem: Option<Ecosystem>,
    pub state: EnvironmentState,
    /// What the active version declares.
    pub packages: Vec<PackageRow>,
    /// Every installed package, pinned (the lock).
    pub lock: Vec<String>,
    /// What the last installation printed.
    pub log: String,
    /// The installer's own words, when the last installation failed.
    pub error: Option<String>,
    /// "Python 3.11.7", "Node v20.20.2".
    pub interpreter: String,
    pub built_at: Option<String>,
    /// The environment's folder on disk.
    pub location: String,
}

/// A package the person is offered when they save a script.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ProposedPackage {
    /// What the script imports: "yaml", "@slack/webhook".
    pub module: String,
    /// What would be installed: "PyYAML".
    pub package: String,
    /// The line of the import (1-based).
    pub line: u32,
    /// Why this name: Healer installed it for this import before, a known mismatch, or the
    /// import's own name.
    pub source: ProposalSource,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ProposalSource {
    Memory,
    Table,
    SameName,
}

/// A package installed for a missing module, as healing memory keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct PackageFix {
    pub id: i64,
    pub signature: String,
    /// "python" or "node".
    pub runtime: String,
    pub module: String,
    pub package: String,
    pub workflow_id: Option<i64>,
    pub workflow_title: Option<String>,
    /// Whether the first run with it passed.
    pub result: FixVerdict,
    pub created_at: String,
}

/// What an ENVIRONMENT checkpoint about a package keeps for the answer "Try another package
/// name…": the import that is missing, and the package that could not be installed for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageQuestion {
    pub workflow_id: i64,
    pub module: String,
    pub package: String,
    pub signature: String,
}

/// How an installation went. Never an `Err`: a failure is what the person is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    pub ok: bool,
    /// What the installer printed, capped.
    pub log: String,
    /// Every installed package, pinned.
    pub lock: Vec<String>,
    /// The installer's own error lines, when it failed.
    pub error: Option<String>,
    pub interpreter: String,
}

impl Built {
    pub(crate) fn failed(log: String, error: String, interpreter: String) -> Built {
        Built {
            ok: false,
            log,
            lock: Vec::new(),
            error: Some(error),
            interpreter,
        }
    }

    /// The installed version of `name`, from the lock.
    pub fn installed_version(&self, ecosystem: Ecosystem, name: &str) -> Option<String> {
        locked_version(ecosystem, &self.lock, name)
    }
}

/// Whether two names are one package to the registry ("PyYAML" and "pyyaml" are).
pub fn same_package(ecosystem: Ecosystem, a: &str, b: &str) -> bool {
    names::canonical(ecosystem, a) == names::canonical(ecosystem, b)
}

/// The version the lock lines give for `name` (names compared the registry's way).
pub fn locked_version(ecosystem: Ecosystem, lock: &[String], name: &str) -> Option<String> {
    let wanted = names::canonical(ecosystem, name);
    lock.iter().find_map(|line| {
        let r = Requirement::parse(ecosystem, line).ok()?;
        (names::canonical(ecosystem, &r.name) == wanted).then(|| r.pinned_version())?
    })
}

/// Install `requirements` into the workflow's environment in `folder`, creating it if needed
/// (`fresh`: from scratch). Installing the same list twice is cheap: the installers skip what
/// is there.
pub async fn build(
    ecosystem: Ecosystem,
    folder: &Path,
    requirements: &[Requirement],
    fresh: bool,
    timeout: Duration,
) -> Built {
    match ecosystem {
        Ecosystem::Python => python::build(folder, requirements, fresh, timeout).await,
        Ecosystem::Node => node::build(folder, requirements, fresh, timeout).await,
    }
}

/// The interpreter the workflow runs with, in words: "Python 3.11.7 (this workflow's own
/// environment)", "Node v20.20.2".
pub async fn interpreter_version(ecosystem: Ecosystem, folder: &Path) -> String {
    match ecosystem {
        Ecosystem::Python => python::interpreter(folder).await,
        Ecosystem::Node => node::interpreter().await,
    }
}

/// Whether the workflow's environment exists on disk.
pub fn environment_exists(ecosystem: Ecosystem, folder: &Path) -> bool {
    match ecosystem {
        Ecosystem::Python => python::venv_python(folder).exists(),
        Ecosystem::Node => folder.join(NODE_MODULES_DIR).is_dir(),
    }
}
