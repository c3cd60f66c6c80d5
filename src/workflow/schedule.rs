//! When a workflow runs: a cron expression (in local time), a fixed interval, or only by hand.

use std::str::FromStr;

use chrono::{DateTime, Duration, Local, Timelike, Utc};
use croner::Cron;
use serde::{Deserialize, Serialize};

use super::capitalise;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Schedule {
    /// Only when run by hand.
    Manual,
    Interval {
        seconds: u32,
    },
    /// Five fields (minute hour day month weekday), or six with seconds first.
    Cron {
        expression: String,
    },
}

/// The shortest interval allowed; shorter would be a busy loop, not a schedule.
pub const MIN_INTERVAL_SECS: u32 = 10;

/// The longest interval: a year (what comes round less often is a cron expression's job).
pub const MAX_INTERVAL_SECS: u32 = 366 * 86_400;

impl Schedule {
    /// Why this schedule is not valid, in words for the person.
    pub fn problem(&self) -> Option<String> {
        match self {
            Schedule::Manual => None,
            Schedule::Interval { seconds: 0 } => Some(format!(
                "every 0 never comes round: choose at least {MIN_INTERVAL_SECS} seconds"
            )),
            Schedule::Interval { seconds } if *seconds < MIN_INTERVAL_SECS => Some(format!(
                "an interval must be at least {MIN_INTERVAL_SECS} seconds"
            )),
            Schedule::Interval { seconds } if *seconds > MAX_INTERVAL_SECS => Some(format!(
                "an interval may be {} days at most; use a cron expression for rarer runs",
                MAX_INTERVAL_SECS / 86_400
            )),
            Schedule::Interval { .. } => None,
            Schedule::Cron { expression } => parse_cron(expression).err(),
        }
    }

    /// Read a schedule as a person types it: "manual", "every 15m" (s, m, h, d), or a cron
    /// expression ("0 7 * * *").
    pub fn from_words(text: &str) -> Result<Schedule, String> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("manual") {
            return Ok(Schedule::Manual);
        }
        if let Some(every) = text.strip_prefix("every ") {
            let every = every.trim();
            let split = every
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(every.len());
            let (number, unit) = every.split_at(split);
            let factor: u64 = match unit.trim() {
                "s" | "sec" | "seconds" | "second" => 1,
                "m" | "min" | "minutes" | "minute" => 60,
                "h" | "hours" | "hour" => 3_600,
                "d" | "days" | "day" => 86_400,
                other => return Err(format!("{other:?} is not a unit: use s, m, h or d")),
            };
            if number.is_empty() {
                return Err(format!("{text:?}: write the interval like \"every 15m\""));
            }
            // Digits only, so the one way to fail is a number too large for any interval.
            let seconds = number
                .parse::<u64>()
                .ok()
                .and_then(|n| n.checked_mul(factor))
                .filter(|s| *s <= u64::from(MAX_INTERVAL_SECS))
                .ok_or_else(|| {
                    format!(
                        "{text:?} is longer than the longest interval, {} days; for something \
                         that happens once a year or less, use a cron expression",
                        MAX_INTERVAL_SECS / 86_400
                    )
                })?;
            let schedule = Schedule::Interval {
                seconds: u32::try_from(seconds).unwrap_or(MAX_INTERVAL_SECS),
            };
            return match schedule.problem() {
                Some(p) => Err(p),
                None => Ok(schedule),
            };
        }
        let schedule = Schedule::Cron {
            expression: text.to_string(),
        };
        match schedule.problem() {
            Some(p) => Err(p),
            None => Ok(schedule),
        }
    }

    /// The first time this schedule is due strictly after `after`.
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match self {
            Schedule::Manual => None,
            Schedule::Interval { seconds } => {
                Some(after + Duration::seconds(i64::from((*seconds).max(MIN_INTERVAL_SECS))))
            }
            Schedule::Cron { expression } => {
                let cron = Cron::from_str(expression.trim()).ok()?;
                // A seconds field could ask for every second: a cron saved before that was
                // refused is still held to the minimum interval.
                let (after, inclusive) = if has_seconds(expression) && runs_too_often(&cron) {
                    // Whole seconds: the cron library drops the fraction when it searches.
                    let held = after + Duration::seconds(i64::from(MIN_INTERVAL_SECS));
                    let whole = held.with_nanosecond(0).unwrap_or(held);
                    let held = if whole < held {
                        whole + Duration::seconds(1)
                    } else {
                        whole
                    };
                    (held, true)
                } else {
                    (after, false)
                };
                let local = after.with_timezone(&Local);
                cron.find_next_occurrence(&local, inclusive)
                    .ok()
                    .map(|t| t.with_timezone(&Utc))
            }
        }
    }

    /// "Every 15 minutes", "At 07:00", "Only when run by hand".
    pub fn describe(&self) -> String {
        match self {
            Schedule::Manual => "Only when run by hand".to_string(),
            Schedule::Interval { seconds } => describe_interval(*seconds),
            Schedule::Cron { expression } => match parse_cron(expression) {
                Ok(cron) => common_cron_in_words(expression)
                    .unwrap_or_else(|| capitalise(cron.describe().trim_end_matches('.'))),
                Err(e) => format!("Invalid schedule: {e}"),
            },
        }
    }
}

/// What a schedule means before it is saved: its words, and when it would next run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct SchedulePreview {
    /// Not valid: `meaning` says why.
    pub valid: bool,
    /// "Every day at 07:00"; for six fields, that the first is seconds.
    pub meaning: String,
    /// The next two times it is due (RFC 3339), none when it runs only by hand.
    pub next: Vec<String>,
}

impl Schedule {
    /// What this schedule means and when it next runs from now.
    pub fn preview_now(&self) -> SchedulePreview {
        self.preview(Utc::now())
    }

    /// What this schedule means and when it next runs after `now`.
    pub fn preview(&self, now: DateTime<Utc>) -> SchedulePreview {
        if let Some(problem) = self.problem() {
            return SchedulePreview {
                valid: false,
                meaning: capitalise(&problem),
                next: Vec::new(),
            };
        }
        let mut meaning = self.describe();
        if let Schedule::Cron { expression } = self {
            if has_seconds(expression) {
                meaning = format!(
                    "{meaning}. It has six fields, so the first is seconds: \
                     second minute hour day month weekday"
                );
            }
        }
        let mut next = Vec::new();
        let mut after = now;
        while next.len() < 2 {
            let Some(due) = self.next_after(after) else {
                break;
            };
            next.push(due.to_rfc3339());
            after = due;
        }
        SchedulePreview {
            valid: true,
            meaning,
            next,
        }
    }
}

/// The everyday shapes, said the way a person would ("Weekdays at 08:30"); `None` for the rest,
/// which croner describes.
fn common_cron_in_words(expression: &str) -> Option<String> {
    const DAYS: [&str; 7] = [
        "Sunday",
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
    ];
    let fields: Vec<&str> = expression.split_whitespace().collect();
    let [minute, hour, day, month, weekday] = fields.as_slice() else {
        return None;
    };
    if let (Some(step), "*", "*", "*", "*") =
        (minute.strip_prefix("*/"), *hour, *day, *month, *weekday)
    {
        let n: u32 = step.parse().ok()?;
        return Some(if n == 1 {
            "Every minute".to_string()
        } else {
            format!("Every {n} minutes")
        });
    }
    let (m, h): (u32, u32) = (minute.parse().ok()?, hour.parse().ok()?);
    if m > 59 || h > 23 || *day != "*" || *month != "*" {
        return None;
    }
    let at = format!("{h:02}:{m:02}");
    match *weekday {
        "*" => Some(format!("Every day at {at}")),
        "1-5" => Some(format!("Weekdays at {at}")),
        "0,6" | "6,0" => Some(format!("Weekends at {at}")),
        d => {
            let d: usize = d.parse().ok()?;
            DAYS.get(d % 7).map(|name| format!("Every {name} at {at}"))
        }
    }
}

fn parse_cron(expression: &str) -> Result<Cron, String> {
    let expression = expression.trim();
    if expression.is_empty() {
        return Err("the cron expression is empty".to_string());
    }
    // Cron-shaped (five to seven fields of cron's characters): the library's words name the
    // field that is wrong. Anything else (words like "every day at 7", where the library's
    // message contradicts the hint) gets the shape to write.
    let cron = Cron::from_str(expression).map_err(|e| {
        if cron_shaped(expression) {
            format!("{expression:?} is not a valid cron expression ({e})")
        } else {
            format!(
                "\u{201c}{expression}\u{201d} is not a cron expression: write five fields, minute \
                 hour day month weekday, like \u{201c}0 7 * * *\u{201d} for every day at 07:00"
            )
        }
    })?;
    if never_comes(&cron) {
        return Err(format!(
            "{expression:?} never comes round: no date matches it (like the 30th of February)"
        ));
    }
    if has_seconds(expression) && runs_too_often(&cron) {
        return Err(format!(
            "{expression:?} runs more often than every {MIN_INTERVAL_SECS} seconds; use \"every {MIN_INTERVAL_SECS}s\" or a longer interval"
        ));
    }
    Ok(cron)
}

/// Whether no time in the next eight years matches (every real schedule, leap days included,
/// comes round within that).
fn never_comes(cron: &Cron) -> bool {
    let Some(start) = chrono::TimeZone::with_ymd_and_hms(&Local, 2030, 1, 1, 0, 0, 0).earliest()
    else {
        return false;
    };
    match cron.find_next_occurrence(&start, false) {
        Ok(next) => next.signed_duration_since(start) > Duration::days(8 * 366),
        Err(_) => true,
    }
}

/// Five to seven fields, each of digits, `*`, `,`, `-`, `/`, `?` or a month or day name.
fn cron_shaped(expression: &str) -> bool {
    let fields: Vec<&str> = expression.split_whitespace().collect();
    (5..=7).contains(&fields.len())
        && fields.iter().all(|f| {
            f.chars()
                .any(|c| c.is_ascii_digit() || c == '*' || c == '?')
                || (f.len() == 3 && f.chars().all(|c| c.is_ascii_alphabetic()))
        })
        && fields.iter().all(|f| {
            f.chars()
                .all(|c| c.is_ascii_alphanumeric() || "*,-/?#".contains(c))
        })
}

/// Six or seven fields: the first is seconds.
fn has_seconds(expression: &str) -> bool {
    expression.split_whitespace().count() >= 6
}

/// Whether two of the next occurrences (from a fixed start, over the first 120) are closer
/// than the minimum interval.
fn runs_too_often(cron: &Cron) -> bool {
    let Some(start) = chrono::TimeZone::with_ymd_and_hms(&Local, 2030, 1, 1, 0, 0, 0).earliest()
    else {
        return false;
    };
    let mut previous: Option<DateTime<Local>> = None;
    for next in cron.iter_after(start).take(120) {
        if let Some(prev) = previous {
            if (next - prev).num_seconds() < i64::from(MIN_INTERVAL_SECS) {
                return true;
            }
        }
        previous = Some(next);
    }
    false
}

fn describe_interval(seconds: u32) -> String {
    let unit = |n: u32, one: &str| {
        if n == 1 {
            format!("Every {one}")
        } else {
            format!("Every {n} {one}s")
        }
    };
    if seconds.is_multiple_of(86_400) {
        unit(seconds / 86_400, "day")
    } else if seconds.is_multiple_of(3_600) {
        unit(seconds / 3_600, "hour")
    } else if seconds.is_multiple_of(60) {
        unit(seconds / 60, "minute")
    } else {
        unit(seconds, "second")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_cron_expression_says_what_is_wrong() {
        let problem = Schedule::Cron {
            expression: "every morning".to_string(),
        }
        .problem()
        .unwrap_or_default();
        assert!(
            problem.contains("is not a cron expression: write five fields"),
            "{problem}"
        );
        let range = Schedule::Cron {
            expression: "61 * * * *".to_string(),
        }
        .problem()
        .unwrap_or_default();
        assert!(range.contains("not a valid cron expression ("), "{range}");
        assert!(Schedule::Cron {
            expression: "*/5 * * * *".to_string()
        }
        .problem()
        .is_none());
    }

    #[test]
    fn a_seconds_field_cannot_beat_the_ten_second_minimum() {
        for fast in [
            "* * * * * *",
            "*/5 * * * * *",
            "0,1 0 * * * *",
            "* * * * * * *",
        ] {
            let problem = Schedule::from_words(fast).err().unwrap_or_default();
            assert!(
                problem.contains("more often than every 10 seconds"),
                "{fast}: {problem}"
            );
        }
        for fine in ["*/10 * * * * *", "0 */5 * * * *", "30 7 * * *"] {
            assert!(Schedule::from_words(fine).is_ok(), "{fine}");
        }
        // One saved before it was refused is still held to the minimum.
        let every_second = Schedule::Cron {
            expression: "* * * * * *".to_string(),
        };
        let t = Utc::now();
        let next = every_second.next_after(t).unwrap_or(t);
        assert!(next >= t + Duration::seconds(10), "{next} after {t}");
    }

    #[test]
    fn an_interval_is_due_that_long_after() {
        let t = Utc::now();
        let next = Schedule::Interval { seconds: 900 }.next_after(t);
        assert_eq!(next, Some(t + Duration::seconds(900)));
        assert_eq!(Schedule::Manual.next_after(t), None);
    }

    #[test]
    fn cron_finds_the_next_minute() {
        let t = Utc::now();
        let next = Schedule::Cron {
            expression: "* * * * *".to_string(),
        }
        .next_after(t)
        .unwrap_or(t);
        assert!(
            next > t && next <= t + Duration::seconds(60),
            "{next} after {t}"
        );
    }

    #[test]
    fn schedules_read_as_words() {
        assert_eq!(
            Schedule::Interval { seconds: 900 }.describe(),
            "Every 15 minutes"
        );
        assert_eq!(
            Schedule::Interval { seconds: 3600 }.describe(),
            "Every hour"
        );
        assert_eq!(Schedule::Manual.describe(), "Only when run by hand");
        let say = |e: &str| {
            Schedule::Cron {
                expression: e.to_string(),
            }
            .describe()
        };
        assert_eq!(say("0 7 * * *"), "Every day at 07:00");
        assert_eq!(say("30 8 * * 1-5"), "Weekdays at 08:30");
        assert_eq!(say("0 9 * * 1"), "Every Monday at 09:00");
        assert_eq!(say("*/15 * * * *"), "Every 15 minutes");
        let rare = say("0 0 1 1 *");
        assert!(
            rare.starts_with(char::is_uppercase) && !rare.ends_with('.'),
            "{rare}"
        );
    }

    #[test]
    fn schedules_are_read_from_words() {
        assert_eq!(Schedule::from_words("manual"), Ok(Schedule::Manual));
        assert_eq!(
            Schedule::from_words("every 15m"),
            Ok(Schedule::Interval { seconds: 900 })
        );
        assert_eq!(
            Schedule::from_words("0 7 * * *"),
            Ok(Schedule::Cron {
                expression: "0 7 * * *".to_string()
            })
        );
        assert!(Schedule::from_words("every 5 fortnights").is_err());
        let huge = Schedule::from_words("every 99999999999999d").expect_err("too long");
        assert!(
            huge.contains("longer than the longest interval, 366 days"),
            "{huge}"
        );
        assert!(Schedule::from_words("every 366d").is_ok());
        let never = Schedule::from_words("0 0 30 2 *").expect_err("never");
        assert!(never.contains("never comes round"), "{never}");
        assert!(
            Schedule::from_words("0 0 29 2 *").is_ok(),
            "a leap day comes round"
        );
        assert!(Schedule::from_words("soon").is_err());
    }

    #[test]
    fn too_short_an_interval_is_refused() {
        assert!(Schedule::Interval { seconds: 1 }.problem().is_some());
    }

    #[test]
    fn a_preview_says_what_a_schedule_means_and_when_it_next_runs() {
        let now = chrono::TimeZone::with_ymd_and_hms(&Local, 2030, 1, 3, 9, 0, 0)
            .earliest()
            .expect("a time")
            .with_timezone(&Utc);
        let daily = Schedule::from_words("0 7 * * *")
            .expect("valid")
            .preview(now);
        assert!(daily.valid);
        assert_eq!(daily.meaning, "Every day at 07:00");
        let next: Vec<DateTime<Local>> = daily
            .next
            .iter()
            .map(|t| {
                DateTime::parse_from_rfc3339(t)
                    .expect("a time")
                    .with_timezone(&Local)
            })
            .collect();
        assert_eq!(next.len(), 2);
        assert_eq!((next[0].format("%d %H:%M").to_string()), "04 07:00");
        assert_eq!((next[1].format("%d %H:%M").to_string()), "05 07:00");

        // Six fields: it runs hourly at :07, and the preview says why it is not daily at 07:00.
        let six = Schedule::Cron {
            expression: "0 7 * * * *".to_string(),
        }
        .preview(now);
        assert!(six.valid);
        assert!(
            six.meaning.contains("six fields, so the first is seconds"),
            "{}",
            six.meaning
        );
        let first = DateTime::parse_from_rfc3339(&six.next[0]).expect("a time");
        assert_eq!(
            first.with_timezone(&Local).format("%H:%M").to_string(),
            "09:07"
        );

        // Words are not a schedule: the message shows the shape, not the library's terms.
        let words = Schedule::Cron {
            expression: "every day at 7".to_string(),
        }
        .preview(now);
        assert!(!words.valid);
        assert!(
            words
                .meaning
                .starts_with("\u{201c}every day at 7\u{201d} is not a cron expression")
                && !words.meaning.contains("pattern"),
            "{}",
            words.meaning
        );
        assert!(Schedule::Manual.preview(now).next.is_empty());
    }
}
