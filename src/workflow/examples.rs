//! Example workflows a new person can load: one healthy, one with a transient failure that
//! retries and recovers, one with a logic error (a data-shape change), one with a missing
//! module that Healer installs. They really run.

use super::{RetryPolicy, Runtime, Schedule, WorkflowInput};

pub struct Example {
    pub input: WorkflowInput,
    /// Extra files written into the workflow's folder.
    pub files: Vec<(&'static str, &'static str)>,
}

fn input(
    title: &str,
    runtime: Runtime,
    schedule: Schedule,
    code: &str,
    summary: &str,
) -> WorkflowInput {
    WorkflowInput {
        title: title.to_string(),
        runtime,
        entry: None,
        schedule,
        env: Vec::new(),
        timeout_secs: 60,
        retry: Some(RetryPolicy::default()),
        code: code.to_string(),
        summary: summary.to_string(),
    }
}

pub fn example_workflows() -> Vec<Example> {
    let daily = |expression: &str| Schedule::Cron {
        expression: expression.to_string(),
    };
    vec![
        Example {
            input: input(
                "Daily weather summary",
                Runtime::Python3,
                daily("0 7 * * *"),
                include_str!("examples/daily_summary.py"),
                "Summarises yesterday's temperature readings",
            ),
            files: vec![],
        },
        Example {
            input: input(
                "Exchange rates",
                Runtime::Python3,
                Schedule::Interval { seconds: 3600 },
                include_str!("examples/exchange_rates.py"),
                "Fetches exchange rates from a sometimes-flaky service",
            ),
            files: vec![],
        },
        Example {
            input: input(
                "Weekly sales report",
                Runtime::Python3,
                daily("0 9 * * 1"),
                include_str!("examples/sales_report.py"),
                "Totals last week's orders from the shop's export",
            ),
            files: vec![("orders.json", include_str!("examples/orders.json"))],
        },
        Example {
            input: input(
                "Team chat digest",
                Runtime::Node,
                daily("30 8 * * 1-5"),
                include_str!("examples/slack_digest.js"),
                "Posts a morning digest to the team's chat",
            ),
            files: vec![],
        },
    ]
}
