//! A tool call's result as the model reads it: text content verbatim, joined by line breaks;
//! other content summarised in one line ("[image: image/png, 12 KiB]"), since a model API's
//! tool result is text; the structured result as JSON when there is no content at all.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

use crate::text::count::approx_bytes;

/// The text of `result` for the model.
pub fn result_text(result: &CallToolResult) -> String {
    let parts: Vec<String> = result.content.iter().map(block_text).collect();
    if parts.is_empty() {
        return match &result.structured_content {
            Some(value) => value.to_string(),
            None => String::new(),
        };
    }
    parts.join("\n")
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => format!("[image: {}, {}]", i.mime_type, approx_bytes(base64_len(&i.data))),
        ContentBlock::Audio(a) => format!("[audio: {}, {}]", a.mime_type, approx_bytes(base64_len(&a.data))),
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => format!("[resource: {uri}]\n{text}"),
            ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => format!(
                "[resource: {uri}, {}, {}]",
                mime_type.as_deref().unwrap_or("binary"),
                approx_bytes(base64_len(blob))
            ),
            _ => "[a resource of a kind livenote does not show]".to_owned(),
        },
        ContentBlock::ResourceLink(l) => format!("[resource link: {} ({})]", l.uri, l.name),
        // A content type newer than this livenote: say so rather than drop it silently.
        _ => "[content of a type livenote does not show]".to_owned(),
    }
}

/// The size of the data a base64 text holds.
fn base64_len(data: &str) -> u64 {
    let chars = data.bytes().filter(|b| !b.is_ascii_whitespace()).count() as u64;
    let padding = data.bytes().rev().filter(|b| !b.is_ascii_whitespace()).take_while(|&b| b == b'=').count();
    (chars / 4 * 3 + (chars % 4).saturating_sub(1)).saturating_sub(padding as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{EmbeddedResource, Resource};
    use serde_json::json;

    #[test]
    fn text_is_joined_and_other_content_summarised() {
        let png = "A".repeat(16 * 1024); // 12 KiB of data
        let result = CallToolResult::success(vec![
            ContentBlock::text("first"),
            ContentBlock::image(png, "image/png"),
            ContentBlock::text("second"),
            ContentBlock::Resource(EmbeddedResource::new(ResourceContents::text("inside", "file:///a.txt"))),
            ContentBlock::ResourceLink(Resource::new("file:///b.pdf", "b.pdf")),
        ]);
        assert_eq!(
            result_text(&result),
            "first\n[image: image/png, 12 KiB]\nsecond\n[resource: file:///a.txt]\ninside\n[resource link: file:///b.pdf (b.pdf)]"
        );
        let mut structured = CallToolResult::structured(json!({"ok": true}));
        structured.content.clear();
        assert!(result_text(&structured).contains("\"ok\":true"), "{}", result_text(&structured));
    }

    #[test]
    fn base64_sizes() {
        assert_eq!(base64_len("aGVsbG8="), 5);
        assert_eq!(base64_len("aGVsbG8h"), 6);
        assert_eq!(base64_len(""), 0);
    }
}
