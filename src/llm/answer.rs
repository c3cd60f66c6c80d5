//! A model's answer that must be one JSON object of a given shape: the fence some models put
//! around it is tolerated, anything that does not parse or match the schema is refused with the
//! reason (model output is untrusted input; nothing is acted on before it passes).

use serde_json::Value;

/// `answer` without the ```json fence some models put around it.
pub(crate) fn unfenced(answer: &str) -> &str {
    let text = answer.trim();
    text.strip_prefix("```json")
        .or_else(|| text.strip_prefix("```"))
        .map(|t| t.trim_end().trim_end_matches("```"))
        .unwrap_or(text)
        .trim()
}

/// The JSON object in `answer` (a ```json fence around it tolerated), once it matches `schema`.
pub fn json_answer(answer: &str, schema: &Value) -> Result<Value, String> {
    let text = unfenced(answer);
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON ({e})"))?;
    let validator = jsonschema::validator_for(schema)
        .map_err(|e| format!("the schema does not compile: {e}"))?;
    if let Some(error) = validator.iter_errors(&value).next() {
        return Err(format!("it does not match the schema: {error}"));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_fenced_object_of_the_shape_passes_and_anything_else_says_why() {
        let schema =
            json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}});
        assert_eq!(
            json_answer("```json\n{\"a\": 1}\n```", &schema),
            Ok(json!({"a": 1}))
        );
        let not_json = json_answer("sure! {\"a\": 1}", &schema).err();
        assert!(not_json.is_some_and(|why| why.starts_with("not JSON")));
        let wrong = json_answer("{\"a\": \"x\"}", &schema).err();
        assert!(wrong.is_some_and(|why| why.starts_with("it does not match the schema")));
    }
}
