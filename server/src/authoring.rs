//! "Make live…" at the edge: the configured model asked, in one call, for a `live:` block drafted
//! from the user's sentence (`note::draft` writes the prompt, reads the reply and checks it).
//! The same one-shot call event routing makes: the default provider's client, JSON mode.

use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::model::{self, Message, Request};
use crate::note::draft;
use crate::survey::Known;

/// Enough for an objective of a few sentences and a handful of triggers; only stops a model
/// that rambles.
const MAX_TOKENS: u32 = 1024;

/// The model's reply to the drafting prompt for `sentence` about the note `text`, or why there
/// is none (no model provider, the call failed): what [`draft::choose`] takes.
pub async fn ask(
    config: &Config,
    known: &Known,
    text: &str,
    sentence: &str,
    cancel: CancellationToken,
) -> Result<String, String> {
    let client = model::default_client(config, "draft live notes")?;
    let tools: Vec<String> = known.mcp.servers.iter().map(|s| s.name.clone()).collect();
    let skills: Vec<(String, String)> = known
        .skills
        .iter()
        .flat_map(|c| c.skills.iter().map(|s| (s.name.clone(), s.description.clone())))
        .collect();
    let prompt = draft::prompt(text, &draft::Setting { sentence, tools: &tools, skills: &skills });
    let messages = [Message::user(prompt)];
    let req = Request {
        system: draft::SYSTEM_PROMPT,
        messages: &messages,
        tools: &[],
        max_tokens: MAX_TOKENS,
        json: true,
    };
    let turn = client.complete(req, cancel).await.map_err(|e| format!("the model call failed: {e}"))?;
    Ok(turn.text)
}
