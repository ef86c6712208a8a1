//! See the suite's header in containment.rs.
//!
//! Issue 21, section 7: `livenote check` took 13 s on five chains of 1,500 nested empty
//! folders (every entry looked at the ignore files of every folder above it: cubic in the
//! depth). The walk now stops at a depth bound and says where; the cost per entry no longer
//! grows with the depth (figures in docs/performance.md, not here).

use std::path::PathBuf;
use std::process::Command;

use crate::common::{tempdir, write};

const NOTE: &str = "---\nlive:\n  objective: o\n  triggers:\n    cronExpr: \"0 * * * *\"\n---\n# N\n";

#[test]
fn deep_folder_chains_are_cut_at_the_depth_bound_and_said() {
    let dir = tempdir();
    let data = tempdir();
    let root = dir.path();
    write(&root.join("top.md"), NOTE);
    // Five chains of 200 folders, with a note 10 deep (found) and one 150 deep (not searched).
    for chain in 0..5 {
        let mut path = root.join(format!("c{chain}"));
        for depth in 1..=200 {
            if depth == 10 && chain == 0 {
                write(&path.join("ten.md"), NOTE);
            }
            if depth == 150 && chain == 0 {
                write(&path.join("deep.md"), NOTE);
            }
            path.push("d");
        }
        std::fs::create_dir_all(&path).unwrap_or_else(|e| panic!("{e}"));
    }
    // A .gitignore low in a chain still applies below it.
    let ignored_at: PathBuf = ["c1", "d", "d", "d"].iter().collect();
    write(&root.join(&ignored_at).join(".gitignore"), "hidden.md\n");
    write(&root.join(&ignored_at).join("d/d/hidden.md"), NOTE);

    let out = Command::new(env!("CARGO_BIN_EXE_livenote"))
        .args(["check", "."])
        .current_dir(root)
        .env("LIVENOTE_DATA_DIR", data.path())
        .env("LIVENOTE_CONFIG_DIR", data.path())
        .env("LIVENOTE_LOG", "info")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let skips: Vec<&str> =
        stderr.lines().filter(|l| l.contains("folders this deep are not searched")).collect();
    assert_eq!(skips.len(), 5, "one skip per chain: {stderr}");
    // Each at the 64th folder of its chain (`cN` and 63 `d`s), relative to the folder named.
    for s in &skips {
        let path = s.split("skip ").nth(1).and_then(|p| p.split(':').next()).unwrap_or_default();
        assert_eq!(path.matches("/d").count(), 63, "{s}");
    }
    assert!(stderr.contains("checked 2 notes"), "top.md and ten.md only: {stderr}");
}
