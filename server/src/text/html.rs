//! HTML as readable text, for the web tool's pages and the feed entries of sources: one home,
//! so both read markup the same way.

/// The readable text of an HTML page: scripts, styles and comments dropped, block elements on
/// their own lines, list items as `- `, entities decoded, whitespace collapsed. Rough, but a
/// model reads it far better than markup, and it fits many more words into the output cap.
pub fn html_to_text(html: &str) -> String {
    const SKIP: [&str; 6] = ["script", "style", "noscript", "template", "svg", "head"];
    const BLOCK: [&str; 22] = [
        "p",
        "div",
        "br",
        "tr",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "ul",
        "ol",
        "table",
        "section",
        "article",
        "header",
        "footer",
        "blockquote",
        "pre",
        "hr",
        "title",
        "main",
    ];
    let lower = html.to_ascii_lowercase();
    let mut out = String::with_capacity(html.len() / 2);
    let mut pos = 0;
    while pos < html.len() {
        let Some(lt) = html[pos..].find('<').map(|i| pos + i) else {
            push_flowing(&mut out, &html[pos..]);
            break;
        };
        push_flowing(&mut out, &html[pos..lt]);
        if lower[lt..].starts_with("<!--") {
            pos = lower[lt..].find("-->").map_or(html.len(), |i| lt + i + 3);
            continue;
        }
        let Some(gt) = html[lt..].find('>').map(|i| lt + i) else { break };
        let tag = &lower[lt + 1..gt];
        let closing = tag.starts_with('/');
        let name: String =
            tag.trim_start_matches('/').chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
        pos = gt + 1;
        if !closing && SKIP.contains(&name.as_str()) && !tag.ends_with('/') {
            let end = format!("</{name}");
            pos = lower[pos..]
                .find(&end)
                .and_then(|i| lower[pos + i..].find('>').map(|j| pos + i + j + 1))
                .unwrap_or(html.len());
        } else if name == "li" && !closing {
            out.push_str("\n- ");
        } else if BLOCK.contains(&name.as_str()) {
            out.push('\n');
        }
    }
    let decoded = decode_entities(&out);
    let mut text = String::with_capacity(decoded.len());
    let mut blank = 0;
    for line in decoded.lines() {
        let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if line.is_empty() {
            blank += 1;
            if blank > 1 || text.is_empty() {
                continue;
            }
        } else {
            blank = 0;
        }
        text.push_str(&line);
        text.push('\n');
    }
    text.trim_end().to_owned()
}

/// HTML text where line breaks are only whitespace: lines come from the tags.
fn push_flowing(out: &mut String, text: &str) {
    out.extend(text.chars().map(|c| if c.is_whitespace() { ' ' } else { c }));
}

fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let entity = rest.find(';').filter(|&i| i <= 10).map(|i| &rest[1..i]);
        let decoded = entity.and_then(|e| match e {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            "nbsp" => Some(' '),
            _ => {
                let n = e.strip_prefix('#')?;
                let code = match n.strip_prefix(['x', 'X']) {
                    Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                    None => n.parse().ok()?,
                };
                char::from_u32(code)
            }
        });
        match (decoded, entity) {
            (Some(c), Some(e)) => {
                out.push(c);
                rest = &rest[e.len() + 2..];
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}
