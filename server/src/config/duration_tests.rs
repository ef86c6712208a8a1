use super::*;

#[test]
fn durations_parse() {
    let cases = [
        ("10m", 600_000),
        ("30s", 30_000),
        ("1h", 3_600_000),
        ("500ms", 500),
        (" 1h30m ", 5_400_000),
        ("1m 30s", 90_000),
        ("0s", 0),
    ];
    for (text, ms) in cases {
        assert_eq!(parse_duration(text), Ok(Duration::from_millis(ms)), "{text}");
    }
}

#[test]
fn duration_errors_say_what_to_write() {
    let err = |s: &str| parse_duration(s).map_err(|e| e.to_string()).err().unwrap_or_default();
    assert_eq!(err(""), "empty duration; write e.g. \"30s\", \"10m\", \"1h\" or \"500ms\"");
    assert_eq!(err("10"), "invalid duration \"10\": missing unit (ms, s, m or h), e.g. \"10s\"");
    assert_eq!(err("10x"), "invalid duration \"10x\": unknown unit \"x\" (use ms, s, m or h)");
    assert_eq!(err("10 min"), "invalid duration \"10 min\": unknown unit \"min\" (use ms, s, m or h)");
    assert_eq!(err("m"), "invalid duration \"m\": expected a number, e.g. \"30s\"");
    assert_eq!(err("1.5s"), "invalid duration \"1.5s\": unknown unit \".5s\" (use ms, s, m or h)");
    assert_eq!(err("-1s"), "invalid duration \"-1s\": expected a number, e.g. \"30s\"");
    assert_eq!(err("99999999999999999999s"), "invalid duration \"99999999999999999999s\": too large");
    assert_eq!(err("9999999999999999999h"), "invalid duration \"9999999999999999999h\": too large");
}

#[test]
fn durations_format_and_read_back() {
    for (ms, text) in [
        (0, "0s"),
        (30_000, "30s"),
        (600_000, "10m"),
        (5_400_000, "1h30m"),
        (1_500, "1s500ms"),
        (300, "300ms"),
    ] {
        let d = Duration::from_millis(ms);
        assert_eq!(format_duration(d), text);
        assert_eq!(parse_duration(text), Ok(d));
    }
}
