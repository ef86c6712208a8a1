//! The schedule's fields: `until`, the runtime timestamps, `triggers` (cron, windows, events)
//! and the windows' times and overlaps.

use super::*;

impl Cx<'_> {
    /// `until`: a date or an RFC 3339 instant; anything else is an error (the note's end must
    /// not be guessed).
    pub(super) fn until(&mut self, e: &Entry) -> Option<Spanned<Until>> {
        let found = match &e.value.kind {
            Kind::Scalar(Scalar::Null) => return None,
            Kind::Scalar(Scalar::Str(s)) => match Until::parse(s) {
                Some(u) => return Some(Spanned { value: u, span: e.value.span.clone() }),
                None => format!("{s:?}"),
            },
            _ => e.value.type_name().to_owned(),
        };
        let span = self.widen(e.value.span.clone());
        let span = if span.is_empty() { e.key_span.clone() } else { span };
        self.push(Diagnostic::error(
            Code::InvalidUntil,
            span,
            format!("`until` must be {}, found {found}", crate::schedule::until::FORMS),
        ));
        None
    }

    pub(super) fn timestamp(&mut self, e: &Entry) -> Option<DateTime<Utc>> {
        let problem = match &e.value.kind {
            Kind::Scalar(Scalar::Null) => return None,
            Kind::Scalar(Scalar::Str(s)) => match DateTime::parse_from_rfc3339(s.trim()) {
                Ok(t) => return Some(t.with_timezone(&Utc)),
                Err(_) => "is not an RFC 3339 time like \"2026-05-08T15:00:01Z\"".to_owned(),
            },
            _ => format!("should be an RFC 3339 time, found {}", e.value.type_name()),
        };
        let span = self.widen(e.value.span.clone());
        self.push(Diagnostic::warning(
            Code::RuntimeFieldShape,
            span,
            format!("`{}` {problem}; it is written by livenote and counts as absent", e.key),
        ));
        None
    }

    pub(super) fn triggers(&mut self, map: &[Entry], live: &mut Live) {
        for e in map {
            match e.key.as_str() {
                "cronExpr" => {
                    let Some(expr) = self.opt_str(e, "a cron expression in quotes") else { continue };
                    let span = self.widen(e.value.span.clone());
                    if expr.trim().is_empty() {
                        self.push(Diagnostic::error(
                            Code::EmptyValue,
                            if span.is_empty() { e.key_span.clone() } else { span },
                            "`cronExpr` is empty: write a cron expression such as \"0 9 * * 1-5\", or remove the key",
                        ));
                        continue;
                    }
                    match CronSchedule::parse(&expr) {
                        Ok(c) => {
                            if c.fires_more_often_than_every_5_minutes() {
                                self.push(Diagnostic::warning(
                                    Code::FrequentCron,
                                    span.clone(),
                                    format!(
                                        "`{expr}` fires more often than every 5 minutes ({}); every fire is an agent run",
                                        c.describe()
                                    ),
                                ));
                            }
                            live.cron = Some(c);
                        }
                        Err(err) => self.push(Diagnostic::error(
                            Code::InvalidCron,
                            span.clone(),
                            format!("invalid cron expression: {err}"),
                        )),
                    }
                    live.cron_expr = Some(Spanned { value: expr, span });
                }
                "windows" => match &e.value.kind {
                    Kind::Seq(items) => {
                        for item in items {
                            let w = self.window(item);
                            live.windows.push(w);
                        }
                        self.overlaps(&live.windows);
                    }
                    Kind::Scalar(Scalar::Null) => {}
                    _ => self.wrong_type("windows", &e.value, "a list of {startTime, endTime}"),
                },
                "eventMatchCriteria" => {
                    if let Some(c) = self.opt_str(e, "text") {
                        if c.trim().is_empty() {
                            let span = self.widen(e.value.span.clone());
                            self.push(Diagnostic::error(
                                Code::EmptyValue,
                                if span.is_empty() { e.key_span.clone() } else { span },
                                "`eventMatchCriteria` is empty: describe which events matter, or remove the key",
                            ));
                        } else {
                            live.event_match_criteria = Some(c);
                        }
                    }
                }
                _ => self.unknown_key(Level::Triggers, e),
            }
        }
    }

    pub(super) fn window(&mut self, item: &Node) -> WindowEntry {
        let span = item.span.clone();
        let Kind::Map(map) = &item.kind else {
            self.wrong_type(
                "windows",
                item,
                "a list of mappings like {startTime: \"09:00\", endTime: \"12:00\"}",
            );
            return WindowEntry { window: None, span, start_text: None, end_text: None };
        };
        let mut start = None;
        let mut end = None;
        let mut ok = true;
        let text_of = |k: &str| item.get(k).and_then(|e| e.value.as_str()).map(str::to_owned);
        let (start_text, end_text) = (text_of("startTime"), text_of("endTime"));
        for e in map {
            match e.key.as_str() {
                "startTime" | "endTime" => {
                    let t = self.time(e);
                    ok &= t.is_some();
                    let slot = if e.key == "startTime" { &mut start } else { &mut end };
                    *slot = t.map(|t| (t, e.value.span.clone()));
                }
                _ => self.unknown_key(Level::Window, e),
            }
        }
        let (Some((s, s_span)), Some((en, e_span))) = (start.clone(), end.clone()) else {
            if ok {
                let missing = if start.is_none() && !map.iter().any(|e| e.key == "startTime") {
                    "startTime"
                } else {
                    "endTime"
                };
                let at = map.first().map_or(self.widen(span.clone()), |e| e.key_span.clone());
                self.push(Diagnostic::error(
                    Code::IncompleteWindow,
                    at,
                    format!("this window has no `{missing}`; a window needs both startTime and endTime"),
                ));
            }
            return WindowEntry { window: None, span, start_text, end_text };
        };
        let window = Window { start: s, end: en };
        if window.is_inverted() {
            let swap = vec![
                TextEdit::replace(s_span.clone(), self.text[e_span.clone()].to_owned()),
                TextEdit::replace(e_span.clone(), self.text[s_span.clone()].to_owned()),
            ];
            let mut d = Diagnostic::error(
                Code::WindowEndBeforeStart,
                s_span.start.min(e_span.start)..s_span.end.max(e_span.end),
                format!("window ends ({en}) before it starts ({s}); windows cannot cross midnight"),
            )
            .with_fix("Swap start and end", swap, false);
            if let Some(split) = self.split_at_midnight(&item.span, s, en) {
                d = d.with_fix(format!("Split into {s}–23:59 and 00:00–{en}"), vec![split], true);
            }
            self.push(d);
            return WindowEntry { window: None, span, start_text, end_text };
        }
        WindowEntry { window: Some(window), span, start_text, end_text }
    }

    /// Replace the list item holding an inverted window by two items, one on each side of
    /// midnight, keeping the item's indentation.
    pub(super) fn split_at_midnight(
        &mut self,
        item_span: &Range<usize>,
        s: TimeOfDay,
        e: TimeOfDay,
    ) -> Option<TextEdit> {
        let text = self.text;
        let o = self.outline();
        let first = o.line_at(item_span.start)?;
        let dash = o.key(first)?.dash_col?;
        let mut last = first;
        for j in first + 1..o.lines.len() {
            let l = &o.lines[j];
            match &l.kind {
                crate::note::outline::LineKind::Blank | crate::note::outline::LineKind::Comment => continue,
                crate::note::outline::LineKind::Key(k) if k.dash_col.is_none() && l.indent > dash => last = j,
                crate::note::outline::LineKind::Continuation => last = j,
                _ => break,
            }
        }
        let range = o.lines[first].full.start..o.lines[last].full.end;
        let nl = crate::text::Eol::of(text).as_str();
        let pad = " ".repeat(dash);
        let ends_with_nl = text[range.clone()].ends_with('\n');
        let mut out = format!(
            "{pad}- startTime: \"{s}\"{nl}{pad}  endTime: \"23:59\"{nl}{pad}- startTime: \"00:00\"{nl}{pad}  endTime: \"{e}\""
        );
        if ends_with_nl {
            out.push_str(nl);
        }
        Some(TextEdit::replace(range, out))
    }

    pub(super) fn time(&mut self, e: &Entry) -> Option<TimeOfDay> {
        let span = self.widen(e.value.span.clone());
        let raw = match &e.value.kind {
            Kind::Scalar(Scalar::Str(s)) => s.clone(),
            Kind::Scalar(Scalar::Null) => {
                self.push(Diagnostic::error(
                    Code::InvalidTime,
                    if span.is_empty() { e.key_span.clone() } else { span },
                    format!("`{}` is empty: write a 24-hour time like \"09:00\"", e.key),
                ));
                return None;
            }
            _ => {
                self.push(Diagnostic::error(
                    Code::InvalidTime,
                    span,
                    format!(
                        "`{}` must be a 24-hour time like \"09:00\", found {}",
                        e.key,
                        e.value.type_name()
                    ),
                ));
                return None;
            }
        };
        match TimeOfDay::parse(&raw) {
            Ok(t) => Some(t),
            Err(TimeOfDayError::NeedsZeroPad { fixed }) => {
                let quoted = requote(&self.text[span.clone()], &fixed);
                self.push(
                    Diagnostic::error(
                        Code::InvalidTime,
                        span.clone(),
                        format!("`{raw}` needs a two-digit hour: `{fixed}`"),
                    )
                    .with_fix(
                        format!("Change to `{fixed}`"),
                        vec![TextEdit::replace(span, quoted)],
                        true,
                    ),
                );
                None
            }
            Err(err) => {
                self.push(Diagnostic::error(
                    Code::InvalidTime,
                    span,
                    format!("`{raw}` is not a time: {err}"),
                ));
                None
            }
        }
    }

    pub(super) fn overlaps(&mut self, windows: &[WindowEntry]) {
        for (i, a) in windows.iter().enumerate() {
            let Some(wa) = a.window else { continue };
            if let Some((_, wb)) =
                windows[..i].iter().filter_map(|b| b.window.map(|w| (b, w))).find(|(_, wb)| wb.overlaps(&wa))
            {
                let span = self.widen(a.span.clone());
                self.push(Diagnostic::warning(
                    Code::OverlappingWindows,
                    span,
                    format!(
                        "window {}–{} overlaps {}–{}: one run inside both counts for both",
                        wa.start, wa.end, wb.start, wb.end
                    ),
                ));
            }
        }
    }
}
