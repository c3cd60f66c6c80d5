use async_trait::async_trait;
use healer::engine::RulePlanner;
use healer::events::Bus;
use healer::failure::{Evidence, Failure, FailureClass, FailureSource};
use healer::heal::{
    HealContext, HealRecord, Outcome, Pipeline, Planner, Recollection, Remedy, RemedyReport,
    RemedyStatus, SettingsPolicy, HEALING_ENABLED,
};
use healer::store::Store;
use healer::{Error, Result};

use crate::data_dir;

/// A remedy that reports what it is told to, for driving the pipeline's path.
struct Scripted(&'static str, Option<RemedyStatus>);

#[async_trait]
impl Remedy for Scripted {
    fn name(&self) -> &'static str {
        self.0
    }
    async fn apply(&self, _: &HealContext<'_>, _: i64, _: &Failure) -> Result<RemedyReport> {
        match self.1 {
            Some(status) => Ok(RemedyReport {
                status,
                detail: format!("{} did its part", self.0),
            }),
            None => Err(Error::Internal(format!("{} broke", self.0))),
        }
    }
}

struct Fixed(fn() -> Vec<Box<dyn Remedy>>);

impl Planner for Fixed {
    fn plan(&self, _: &Failure, _: &Recollection) -> Vec<Box<dyn Remedy>> {
        (self.0)()
    }
}

fn failure() -> Failure {
    Failure::new(
        FailureSource::ScriptRun {
            workflow_id: 7,
            run_id: 42,
        },
        "script-run",
        FailureClass::Logic,
        Evidence {
            error_type: Some("KeyError".to_string()),
            message: "'total'".to_string(),
            stack: None,
        },
    )
}

async fn heal_with(store: &Store, planner: Box<dyn Planner>) -> (HealRecord, Vec<String>) {
    let bus = Bus::new(store.clone());
    let mut live = bus.subscribe();
    let pipeline = Pipeline::new(Box::new(SettingsPolicy), planner);
    let record = pipeline
        .heal(&HealContext::detached(store, &bus), failure())
        .await
        .expect("heal");
    let mut kinds = Vec::new();
    while let Ok(r) = live.try_recv() {
        kinds.push(r.event.kind().to_string());
    }
    (record, kinds)
}

#[tokio::test]
async fn remedies_run_in_order_until_one_contains_the_failure() {
    let (_tmp, paths) = data_dir();
    let store = Store::open(&paths.db()).expect("open");
    let (record, kinds) = heal_with(
        &store,
        Box::new(Fixed(|| {
            vec![
                Box::new(Scripted("first", Some(RemedyStatus::NotResolved))),
                Box::new(Scripted("second", None)),
                Box::new(Scripted("third", Some(RemedyStatus::Contained))),
                Box::new(Scripted("never", Some(RemedyStatus::Resolved))),
            ]
        })),
    )
    .await;

    assert_eq!(record.outcome, Some(Outcome::Contained));
    let tried: Vec<_> = record
        .remedies
        .iter()
        .map(|a| (a.remedy.as_str(), a.status))
        .collect();
    assert_eq!(
        tried,
        [
            ("first", RemedyStatus::NotResolved),
            ("second", RemedyStatus::Failed),
            ("third", RemedyStatus::Contained),
        ]
    );
    assert_eq!(
        record.remedies[1].detail, "second broke",
        "a remedy's error is recorded"
    );
    assert_eq!(
        kinds,
        [
            "heal_started",
            "remedy_applied",
            "remedy_applied",
            "remedy_applied",
            "heal_finished"
        ]
    );
    // What was returned is what was stored.
    assert_eq!(store.heal(record.id).expect("stored"), record);
}

#[tokio::test]
async fn a_failure_no_remedy_helps_is_unresolved_with_every_remedy_listed() {
    let (_tmp, paths) = data_dir();
    let store = Store::open(&paths.db()).expect("open");
    let (record, _) = heal_with(
        &store,
        Box::new(Fixed(|| {
            vec![
                Box::new(Scripted("retry", Some(RemedyStatus::NotResolved))),
                Box::new(Scripted("fix", Some(RemedyStatus::NotResolved))),
            ]
        })),
    )
    .await;
    assert_eq!(record.outcome, Some(Outcome::Unresolved));
    assert_eq!(record.summary, "No remedy worked (tried: retry, fix)");
    assert_eq!(record.remedies.len(), 2);
}

#[tokio::test]
async fn turning_healing_off_skips_every_remedy() {
    let (_tmp, paths) = data_dir();
    let store = Store::open(&paths.db()).expect("open");
    store.set_setting(HEALING_ENABLED, &false).expect("setting");
    let (record, kinds) = heal_with(&store, Box::new(RulePlanner)).await;
    assert_eq!(record.outcome, Some(Outcome::Skipped));
    assert!(record.remedies.is_empty());
    assert!(record.summary.contains("turned off"), "{}", record.summary);
    assert_eq!(kinds, ["heal_started", "heal_finished"]);
    assert_eq!(store.list_notifications().expect("list").unread, 0);
}

#[tokio::test]
async fn record_and_notify_tells_the_person_and_contains_the_failure() {
    let (_tmp, paths) = data_dir();
    let store = Store::open(&paths.db()).expect("open");
    let (record, _) = heal_with(&store, Box::new(RulePlanner)).await;
    assert_eq!(record.outcome, Some(Outcome::Contained));
    let list = store.list_notifications().expect("list");
    assert_eq!(list.unread, 1);
    assert_eq!(list.items[0].heal_id, Some(record.id));
    assert_eq!(
        list.items[0].body,
        "KeyError: 'total' — an error in the script or the shape of its data (run 42)"
    );
    assert_eq!(
        list.items[0].title, "Workflow 7 failed",
        "no such workflow in this store"
    );
}
