//! Checks across lines: dependencies on tasks that are not in the file, and cycles (a task that
//! waits, through others, for itself would never be ready).

use std::collections::{HashMap, HashSet};

use super::{Problem, ProblemKind, Task};

pub(super) fn check_graph(tasks: &[&Task]) -> Vec<Problem> {
    let ids: HashSet<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
    let mut problems = Vec::new();
    for task in tasks {
        for dep in task.blocking_deps() {
            if !ids.contains(dep) {
                problems.push(Problem {
                    line: None,
                    kind: ProblemKind::UnknownDep,
                    message: format!(
                        "The task {:?} waits for {dep:?}, which is not in the list; it will not be ready until that task exists and is closed",
                        task.id
                    ),
                });
            }
        }
    }
    for cycle in cycles(tasks) {
        let mut path = cycle.join(" → ");
        if let Some(first) = cycle.first() {
            path.push_str(&format!(" → {first}"));
        }
        problems.push(Problem {
            line: None,
            kind: ProblemKind::Cycle,
            message: format!(
                "These tasks wait for each other in a circle ({path}), so none of them can start; remove one of the dependencies"
            ),
        });
    }
    problems
}

/// The ids of every task that sits in a cycle of blocking dependencies.
pub(super) fn in_cycles(tasks: &[&Task]) -> HashSet<String> {
    cycles(tasks).into_iter().flatten().collect()
}

/// Each cycle once, as the ids along it in file order from its first task. Iterative
/// depth-first search (a hand-written file may be long; no recursion depth to run out of).
fn cycles(tasks: &[&Task]) -> Vec<Vec<String>> {
    let index: HashMap<&str, usize> = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id.as_str(), i))
        .collect();
    let edges: Vec<Vec<usize>> = tasks
        .iter()
        .map(|t| {
            t.blocking_deps()
                .filter_map(|d| index.get(d).copied())
                .collect()
        })
        .collect();
    // 0 unseen, 1 on the current path, 2 done.
    let mut state = vec![0u8; tasks.len()];
    let mut found: Vec<Vec<String>> = Vec::new();
    let mut reported: HashSet<usize> = HashSet::new();
    for start in 0..tasks.len() {
        if state.get(start) != Some(&0) {
            continue;
        }
        let mut path: Vec<usize> = vec![start];
        let mut next_edge: Vec<usize> = vec![0];
        if let Some(s) = state.get_mut(start) {
            *s = 1;
        }
        while let (Some(&node), Some(edge)) = (path.last(), next_edge.last_mut()) {
            let Some(&target) = edges.get(node).and_then(|e| e.get(*edge)) else {
                if let Some(s) = state.get_mut(node) {
                    *s = 2;
                }
                path.pop();
                next_edge.pop();
                continue;
            };
            *edge += 1;
            match state.get(target) {
                Some(0) => {
                    if let Some(s) = state.get_mut(target) {
                        *s = 1;
                    }
                    path.push(target);
                    next_edge.push(0);
                }
                Some(1) => {
                    let from = path.iter().position(|&n| n == target).unwrap_or(0);
                    let members: Vec<usize> = path.get(from..).unwrap_or_default().to_vec();
                    if members.iter().all(|m| reported.insert(*m)) {
                        found.push(
                            members
                                .iter()
                                .filter_map(|&m| tasks.get(m).map(|t| t.id.clone()))
                                .collect(),
                        );
                    }
                }
                _ => {}
            }
        }
    }
    found
}
