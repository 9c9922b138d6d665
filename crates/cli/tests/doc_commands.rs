//! Every fenced shell command of README.md and docs/cli.md (a ```sh block's
//! lines, a text block's `$ `-prompted ones) that needs no
//! second host runs as written, with shortened durations: scenarios cut to
//! 0.3 s, live transfers to 1 s, sweeps to one seed, a relay to 0.3 s on a
//! port of the system's choosing (no test binds a fixed port).
//! Skipped: building and testing (`cargo test`, `cargo bench`, quinn's
//! examples), the two-host `serve`/`send` pair, and `parallel`/`sbatch`
//! (which run the `sweep run --index` command this test runs as `--jobs`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The commands of the ```sh blocks of `md`, and of the `$ `-prompted
/// lines of its other fenced blocks (an example's command above its
/// output), continuation lines joined and trailing comments removed.
fn shell_commands(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut in_other = false;
    let mut pending = String::new();
    for line in md.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            let opening = !in_sh && !in_other;
            in_sh = opening && (t == "```sh" || t == "```bash" || t == "```shell");
            in_other = opening && !in_sh;
            continue;
        }
        let t = match (in_other, t.strip_prefix("$ ")) {
            (true, Some(cmd)) => cmd.trim(),
            (true, None) if pending.is_empty() => continue,
            (true, None) => t,
            (false, _) => t,
        };
        if !(in_sh || in_other) || t.starts_with('#') {
            continue;
        }
        let code = t.find(" #").map_or(t, |i| &t[..i]).trim();
        if let Some(head) = code.strip_suffix('\\') {
            pending += head.trim_end();
            pending.push(' ');
            continue;
        }
        pending += code;
        if !pending.trim().is_empty() {
            out.push(std::mem::take(&mut pending).trim().to_string());
        }
        pending.clear();
    }
    out
}

/// Split a command line as a shell would: whitespace, '...' and "...".
fn words(cmd: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote = None;
    let mut any = false;
    for c in cmd.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            (None, c) => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The tputctl arguments of `cmd` and the file its stdout is redirected
/// to, shortened; `None` for a command this test does not run.
fn runnable(cmd: &str, dir: &Path) -> Option<(Vec<String>, Option<String>)> {
    let cmd = cmd
        .strip_prefix("cargo run --release -p tputctl -- ")
        .map_or(cmd.to_string(), |rest| format!("tputctl {rest}"));
    let mut w = words(&cmd);
    if w.first().map(String::as_str) != Some("tputctl") {
        return None;
    }
    w.remove(0);
    match w.first().map(String::as_str) {
        Some("serve" | "send") => return None,
        Some("relay") => {
            w.extend(["--time".into(), "0.3".into()]);
            // The documented port may be taken on this machine: any free one does.
            if let Some(i) = w.iter().position(|a| a == "--listen")
                && let Some(addr) = w.get_mut(i + 1)
            {
                *addr = "127.0.0.1:0".into();
            }
        }
        _ => {}
    }
    let mut redirect = None;
    if let Some(i) = w.iter().position(|a| a == ">") {
        redirect = w.get(i + 1).cloned();
        w.truncate(i);
    }
    for i in 0..w.len() {
        if w[i].starts_with("scenarios/") && w[i].ends_with(".toml") {
            let text = std::fs::read_to_string(repo().join(&w[i])).unwrap();
            let short: Vec<String> = text
                .lines()
                .map(|l| {
                    if l.starts_with("duration = ") {
                        "duration = \"0.3s\"".to_string()
                    } else {
                        l.to_string()
                    }
                })
                .collect();
            let copy = dir.join(&w[i]);
            std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
            std::fs::write(&copy, short.join("\n")).unwrap();
        }
        if i > 0 && (w[i - 1] == "--time" || w[i - 1] == "-t") && w[0] != "relay" {
            w[i] = "1s".into();
        }
        if i > 0 && w[i - 1] == "--seeds" {
            w[i] = "1..1".into();
        }
    }
    Some((w, redirect))
}

#[test]
fn the_documented_commands_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut ran = Vec::new();
    let mut from_cli_md = Vec::new();
    for doc in ["README.md", "docs/cli.md"] {
        let md = std::fs::read_to_string(repo().join(doc)).unwrap();
        for cmd in shell_commands(&md) {
            let Some((args, redirect)) = runnable(&cmd, dir.path()) else {
                continue;
            };
            let o = Command::new(env!("CARGO_BIN_EXE_tputctl"))
                .args(&args)
                .current_dir(dir.path())
                .stdin(Stdio::null())
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{doc}: `{cmd}` (run as {args:?}) failed: {}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            if let Some(file) = redirect {
                std::fs::write(dir.path().join(file), &o.stdout).unwrap();
            }
            ran.push(args[0].clone());
            if doc == "docs/cli.md" {
                from_cli_md.push(cmd);
            }
        }
    }
    // docs/cli.md's example (`sim --harm`, in a text block with its output).
    assert!(
        from_cli_md.iter().any(|c| c.contains("sim ") && c.contains("--harm")),
        "docs/cli.md's examples did not run: {from_cli_md:?}"
    );
    // The quick start's simulation and loopback, the sweep's three steps, the relay.
    for sub in ["sim", "loopback", "sweep", "relay"] {
        assert!(ran.iter().any(|r| r == sub), "no `{sub}` command ran: {ran:?}");
    }
    assert!(dir.path().join("out/guarantee-n30/throughput.svg").exists());
    assert!(dir.path().join("res/sweep.csv").exists());
}

#[test]
fn commands_are_read_as_a_shell_reads_them() {
    let md = "```sh\ntputctl a 'x y' \\\n    \"z\"   # note\n# comment\n```\n```toml\ntputctl no\n```\n";
    assert_eq!(shell_commands(md), vec!["tputctl a 'x y' \"z\"".to_string()]);
    // A prompted line of a text block is a command; its output is not.
    let md = "```text\n$ tputctl sim a.toml \\\n    --harm\n...\nharm 1.0\n```\n```sh\ntputctl b\n```\n";
    assert_eq!(
        shell_commands(md),
        vec!["tputctl sim a.toml --harm".to_string(), "tputctl b".to_string()]
    );
    assert_eq!(words("tputctl a 'x y' \"z\""), vec!["tputctl", "a", "x y", "z"]);
}

#[test]
fn a_documented_relay_listens_on_a_free_port() {
    let dir = tempfile::tempdir().unwrap();
    let cmd = "tputctl relay --listen 127.0.0.1:4434 --to 127.0.0.1:4433 --forward rate=10Mbit/s";
    let (args, _) = runnable(cmd, dir.path()).unwrap();
    let listen = args.iter().position(|a| a == "--listen").unwrap();
    assert_eq!(args[listen + 1], "127.0.0.1:0", "{args:?}");
    assert!(
        args.contains(&"127.0.0.1:4433".to_string()),
        "the destination stays: {args:?}"
    );
}
