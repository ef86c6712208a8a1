//! The names the packages depend on agree: the release workflow's archives
//! (.github/workflows/release.yml), what `cargo binstall` downloads (server/Cargo.toml's
//! `[package.metadata.binstall]`), the mason registry package (editors/nvim/mason/package.yaml)
//! and the VS Code target each archive's binary is packaged for. A rename in one of them that
//! the others miss would only show at the first release, as a 404 for a user.

use std::path::{Path, PathBuf};

use saphyr::{LoadableYamlNode, Yaml};

fn checkout() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(checkout().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn toml_file(rel: &str) -> toml::Table {
    read(rel).parse().unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn yaml_str<'a>(node: &'a Yaml<'a>, what: &str) -> &'a str {
    node.as_str().unwrap_or_else(|| panic!("{what} is not a string: {node:?}"))
}

/// The version in the workspace's Cargo.toml, which the release tag must name (`v<version>`).
fn version() -> String {
    let root = toml_file("Cargo.toml");
    root["workspace"]["package"]["version"]
        .as_str()
        .unwrap_or_else(|| panic!("no workspace version"))
        .to_owned()
}

/// The release workflow's build matrix: (Rust target, archive extension).
fn release_targets() -> Vec<(String, String)> {
    let text = read(".github/workflows/release.yml");
    let docs = Yaml::load_from_str(&text).unwrap_or_else(|e| panic!("release.yml: {e}"));
    let include = docs[0]["jobs"]["build"]["strategy"]["matrix"]["include"]
        .as_vec()
        .unwrap_or_else(|| panic!("release.yml: no jobs.build.strategy.matrix.include list"));
    include
        .iter()
        .map(|row| {
            (yaml_str(&row["target"], "target").to_owned(), yaml_str(&row["archive"], "archive").to_owned())
        })
        .collect()
}

/// The archive the release publishes for `target`, as the workflow's archive step names it.
fn archive(version: &str, target: &str, ext: &str) -> String {
    format!("livenote-v{version}-{target}.{ext}")
}

/// The VS Code target whose platform package carries `target`'s binary.
fn vsce_target(target: &str) -> &'static str {
    match target {
        "x86_64-unknown-linux-musl" => "linux-x64",
        "aarch64-unknown-linux-musl" => "linux-arm64",
        "x86_64-apple-darwin" => "darwin-x64",
        "aarch64-apple-darwin" => "darwin-arm64",
        "x86_64-pc-windows-msvc" => "win32-x64",
        other => panic!("release.yml builds {other}, which has no VS Code target here"),
    }
}

#[test]
fn the_release_builds_every_platform_once_and_names_archives_as_its_step_does() {
    let targets = release_targets();
    let mut names: Vec<&str> = targets.iter().map(|(t, _)| t.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "aarch64-apple-darwin",
            "aarch64-unknown-linux-musl",
            "x86_64-apple-darwin",
            "x86_64-pc-windows-msvc",
            "x86_64-unknown-linux-musl"
        ]
    );
    let text = read(".github/workflows/release.yml");
    // The archive step's name and extension, which archive() mirrors.
    assert!(
        text.contains(r#"name="livenote-${GITHUB_REF_NAME}-$TARGET""#),
        "release.yml's archive name changed"
    );
    assert!(text.contains(r#""../dist/$name.zip""#) && text.contains(r#""dist/$name.tar.gz""#));
    for (target, ext) in &targets {
        assert_eq!(ext == "zip", target.contains("windows"), "{target}: {ext}");
        // The vsix job packages each archive's binary for its VS Code target.
        let pair = format!("{target}:{}", vsce_target(target));
        assert!(text.contains(&pair), "release.yml's vsix job has no {pair}");
    }
}

#[test]
fn cargo_binstall_finds_each_release_archive() {
    let version = version();
    let manifest = toml_file("server/Cargo.toml");
    let binstall = manifest["package"]["metadata"]["binstall"]
        .as_table()
        .unwrap_or_else(|| panic!("server/Cargo.toml has no [package.metadata.binstall]"));
    let repo = manifest["package"]["repository"].as_str().unwrap_or_else(|| panic!("no repository"));
    let empty = toml::Table::new();
    let overrides = binstall.get("overrides").and_then(|o| o.as_table()).unwrap_or(&empty);
    let field = |target: &str, key: &str| -> String {
        let over = overrides.get(target).and_then(|o| o.get(key)).and_then(|v| v.as_str());
        over.or_else(|| binstall.get(key).and_then(|v| v.as_str()))
            .unwrap_or_else(|| panic!("binstall: no {key} for {target}"))
            .to_owned()
    };
    // What binstall asks for on each platform: the release's own targets, and glibc Linux,
    // which gets the static musl build.
    let mut asked: Vec<(String, String)> =
        release_targets().into_iter().map(|(t, ext)| (t.clone(), archive(&version, &t, &ext))).collect();
    for (gnu, musl) in [
        ("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-musl"),
        ("aarch64-unknown-linux-gnu", "aarch64-unknown-linux-musl"),
    ] {
        asked.push((gnu.to_owned(), archive(&version, musl, "tar.gz")));
    }
    for (target, wanted) in asked {
        let suffix = match field(&target, "pkg-fmt").as_str() {
            "tgz" => ".tar.gz",
            "zip" => ".zip",
            other => panic!("{target}: pkg-fmt {other} is neither of the release's formats"),
        };
        let url = field(&target, "pkg-url")
            .replace("{ repo }", repo)
            .replace("{ version }", &version)
            .replace("{ target }", &target)
            .replace("{ archive-suffix }", suffix);
        assert_eq!(url, format!("{repo}/releases/download/v{version}/{wanted}"), "{target}");
        // The binary sits at the top of every archive.
        assert_eq!(field(&target, "bin-dir"), "{ bin }{ binary-ext }");
    }
}

#[test]
fn the_mason_package_installs_the_release_archives() {
    let version = version();
    let text = read("editors/nvim/mason/package.yaml");
    let docs = Yaml::load_from_str(&text).unwrap_or_else(|e| panic!("package.yaml: {e}"));
    let package = &docs[0];
    assert_eq!(yaml_str(&package["name"], "name"), "livenote");
    assert_eq!(
        yaml_str(&package["source"]["id"], "source.id"),
        format!("pkg:github/livenote/livenote@v{version}")
    );
    assert_eq!(yaml_str(&package["neovim"]["lspconfig"], "neovim.lspconfig"), "livenote");
    let assets =
        package["source"]["asset"].as_vec().unwrap_or_else(|| panic!("package.yaml: no source.asset list"));
    let mason_target = |target: &str| match target {
        "x86_64-unknown-linux-musl" => "linux_x64",
        "aarch64-unknown-linux-musl" => "linux_arm64",
        "x86_64-apple-darwin" => "darwin_x64",
        "aarch64-apple-darwin" => "darwin_arm64",
        "x86_64-pc-windows-msvc" => "win_x64",
        other => panic!("no mason target for {other}"),
    };
    let targets = release_targets();
    assert_eq!(assets.len(), targets.len(), "one mason asset per release archive");
    for (target, ext) in targets {
        let asset = assets
            .iter()
            .find(|a| a["target"].as_str() == Some(mason_target(&target)))
            .unwrap_or_else(|| panic!("package.yaml has no {} asset", mason_target(&target)));
        // mason's {{ version }} is the tag, v<version>.
        let file = yaml_str(&asset["file"], "file").replace("{{ version }}", &format!("v{version}"));
        assert_eq!(file, archive(&version, &target, &ext));
        let bin = if target.contains("windows") { "livenote.exe" } else { "livenote" };
        assert_eq!(yaml_str(&asset["bin"], "bin"), bin);
    }
}
