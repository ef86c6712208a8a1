//! Fuzz the frontmatter scanner, the YAML reader, the outline and the validator: any bytes
//! that are UTF-8 must analyse without panicking, with diagnostics inside the text and fixes
//! that apply cleanly.
#![no_main]

use libfuzzer_sys::fuzz_target;
use livenote::note::{self, Options, outline::Outline};
use livenote::text::edit;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let providers = ["local".to_owned()];
    let a = note::analyze(
        text,
        &Options { providers: Some(&providers), mcp: None, skills: None, scan_body: true, max_backoff: None },
    );
    for d in &a.diagnostics {
        assert!(d.range.end <= text.len() && text.is_char_boundary(d.range.start) && text.is_char_boundary(d.range.end));
        for f in &d.fixes {
            if let Err(e) = edit::apply(text, &f.edits) {
                panic!("fix {:?} does not apply: {e}", f.title);
            }
        }
    }
    if let Some(fm) = &a.frontmatter {
        let o = Outline::parse(text, fm.content.clone());
        for i in 0..o.lines.len() {
            let _ = (o.extent(i), o.children(i));
        }
    }
});
