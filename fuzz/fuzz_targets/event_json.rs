//! Fuzz the event queue's readers (server/src/events.rs): `parse_event` on an event file's
//! text and `parse_routing_output` on a routing model's reply. Any UTF-8 input.
//!
//! Checked: nothing panics; an accepted event has the required fields non-blank and a
//! payload; it serialises (as `done/` records do) to exactly the object it was read from,
//! unknown keys included (`targetFilePath: null` aside, which is dropped); serialising and
//! parsing again gives the same event and the same text; the texts built from an event
//! (payload, run context, routing prompt) do not panic. An accepted routing reply lists the
//! `filePaths` strings of the JSON object in the reply.
#![no_main]

use libfuzzer_sys::fuzz_target;
use livenote::events::{self, Event, parse_event, parse_routing_output};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    event(text);
    routing(text);
});

fn event(text: &str) {
    let Ok(ev) = parse_event(text) else { return };
    for (name, v) in [("id", &ev.id), ("source", &ev.source), ("type", &ev.kind), ("createdAt", &ev.created_at)] {
        assert!(!v.trim().is_empty(), "{name} is blank");
    }
    assert!(!ev.payload.is_null());

    // `done/` records start from the event as a JSON object: what the producer wrote.
    let written = serde_json::to_value(&ev).unwrap_or_else(|e| panic!("event does not serialise: {e}"));
    let Value::Object(written) = written else { panic!("event serialises to a non-object") };
    let mut read: serde_json::Map<String, Value> =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("accepted event is not a JSON object: {e}"));
    if read.get("targetFilePath") == Some(&Value::Null) {
        read.remove("targetFilePath");
    }
    assert_eq!(written, read, "the event does not write back what was read");

    let s = serde_json::to_string(&ev).unwrap_or_else(|e| panic!("event does not serialise: {e}"));
    let again = parse_event(&s).unwrap_or_else(|e| panic!("serialised event {s:?} is refused: {e}"));
    assert_eq!(again, ev, "round trip changed the event");
    let s2 = serde_json::to_string(&again).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s2, s, "serialisation is not stable");

    let _ = ev.payload_text();
    let _ = events::run_context(&ev, "criteria");
    let _ = events::routing_prompt(&ev, &[]);
    if let Some(t) = &ev.target_file_path {
        let _ = events::normalize_target(std::path::Path::new("/w"), t);
    }
    let _: &Event = &ev;
}

fn routing(text: &str) {
    let Ok(paths) = parse_routing_output(text) else { return };
    // The reply holds a JSON object whose `filePaths` are those strings.
    let t = text.trim();
    let (Some(a), Some(b)) = (t.find('{'), t.rfind('}')) else { panic!("accepted a reply without an object") };
    let v: Value = serde_json::from_str(&t[a..=b]).unwrap_or_else(|e| panic!("accepted invalid JSON: {e}"));
    let listed: Vec<&str> = v["filePaths"]
        .as_array()
        .unwrap_or_else(|| panic!("no filePaths list"))
        .iter()
        .map(|p| p.as_str().unwrap_or_else(|| panic!("non-string path {p}")))
        .collect();
    assert_eq!(paths, listed);
}
