//! Tools an agent may call: Rust trait objects, so each caller hands the loop its own
//! restricted set. A model's arguments are untrusted text: they must parse as JSON and pass the
//! tool's JSON Schema (checked with the `jsonschema` crate) before the tool sees them.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use super::chat::{ToolCall, ToolSpec};
use crate::error::{Error, Result};

/// How many schema problems one tool error lists.
const MAX_PROBLEMS: usize = 5;

#[async_trait]
pub trait Tool: Send + Sync {
    /// Letters, digits, '_' and '-' (both wire formats allow no more).
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    /// JSON Schema of the arguments object.
    fn schema(&self) -> Value;
    /// Run with arguments that passed the schema. An error goes back to the model as the
    /// tool's result (marked as an error); it does not end the loop.
    async fn call(&self, args: Value) -> Result<String>;

    /// Whether a successful call ends the loop, its result being the answer (a coding agent's
    /// `finish(summary)`), so the model is not asked once more after saying it is done.
    fn ends_loop(&self) -> bool {
        false
    }
}

struct Entry {
    tool: Arc<dyn Tool>,
    spec: ToolSpec,
    validator: jsonschema::Validator,
}

/// The tools of one agent loop, their schemas compiled once.
pub struct ToolSet {
    entries: Vec<Entry>,
}

/// Why a call was not run: the text the model gets back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected(pub String);

impl ToolSet {
    pub fn new(tools: Vec<Arc<dyn Tool>>) -> Result<ToolSet> {
        let mut entries: Vec<Entry> = Vec::with_capacity(tools.len());
        for tool in tools {
            let name = tool.name().to_string();
            if name.is_empty()
                || name.len() > 64
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(Error::Internal(format!(
                    "tool name {name:?} is not allowed"
                )));
            }
            if entries.iter().any(|e| e.spec.name == name) {
                return Err(Error::Internal(format!("two tools are named {name}")));
            }
            let schema = tool.schema();
            let validator = jsonschema::validator_for(&schema)
                .map_err(|e| Error::Internal(format!("tool {name} has an invalid schema: {e}")))?;
            entries.push(Entry {
                spec: ToolSpec {
                    name,
                    description: tool.description().to_string(),
                    schema,
                },
                tool,
                validator,
            });
        }
        Ok(ToolSet { entries })
    }

    pub fn empty() -> ToolSet {
        ToolSet { entries: vec![] }
    }

    pub fn specs(&self) -> Vec<ToolSpec> {
        self.entries.iter().map(|e| e.spec.clone()).collect()
    }

    /// The tool and its parsed arguments, or why the call cannot run.
    pub fn check(&self, call: &ToolCall) -> Result<(Arc<dyn Tool>, Value), Rejected> {
        let entry = self
            .entries
            .iter()
            .find(|e| e.spec.name == call.name)
            .ok_or_else(|| {
                let names: Vec<_> = self.entries.iter().map(|e| e.spec.name.as_str()).collect();
                Rejected(format!(
                    "there is no tool named {:?}; the tools are: {}",
                    call.name,
                    names.join(", ")
                ))
            })?;
        let text = if call.arguments.trim().is_empty() {
            "{}"
        } else {
            call.arguments.as_str()
        };
        let args: Value = serde_json::from_str(text).map_err(|e| {
            Rejected(format!(
                "the arguments of {} are not valid JSON ({e}); send one JSON object",
                call.name
            ))
        })?;
        let problems: Vec<String> = entry
            .validator
            .iter_errors(&args)
            .take(MAX_PROBLEMS)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("at {at}: {e}")
                }
            })
            .collect();
        if !problems.is_empty() {
            return Err(Rejected(format!(
                "the arguments of {} do not match its schema: {}",
                call.name,
                problems.join("; ")
            )));
        }
        Ok((entry.tool.clone(), args))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Echo;

    #[async_trait]
    impl Tool for Echo {
        fn name(&self) -> &str {
            "echo"
        }
        fn description(&self) -> &str {
            "says it back"
        }
        fn schema(&self) -> Value {
            json!({"type": "object", "properties": {"text": {"type": "string"}},
                   "required": ["text"], "additionalProperties": false})
        }
        async fn call(&self, args: Value) -> Result<String> {
            Ok(args["text"].as_str().unwrap_or_default().to_string())
        }
    }

    fn call(name: &str, arguments: &str) -> ToolCall {
        ToolCall {
            id: "1".to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
        }
    }

    #[test]
    fn arguments_must_be_json_and_match_the_schema() -> Result<()> {
        let set = ToolSet::new(vec![Arc::new(Echo)])?;
        assert!(set.check(&call("echo", r#"{"text":"hi"}"#)).is_ok());
        let Err(Rejected(why)) = set.check(&call("echo", r#"{"text":3}"#)) else {
            panic!("a number is not a string");
        };
        assert!(why.contains("/text"), "{why}");
        let Err(Rejected(why)) = set.check(&call("echo", "{text:")) else {
            panic!("not JSON");
        };
        assert!(why.contains("not valid JSON"), "{why}");
        let Err(Rejected(why)) = set.check(&call("rm", "{}")) else {
            panic!("unknown tool");
        };
        assert!(why.contains("the tools are: echo"), "{why}");
        Ok(())
    }
}
