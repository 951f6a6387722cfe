//! The world a run sets up once: the seeds, a root full of things it must never serve, the
//! proxy's upstream, the manifests to mutate, and the JSON Schema Test Suite's groups.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::Config;
use super::seeds::{Seed, load_seeds, serves_builtin};

/// Files and state set up once per run.
pub struct World {
    pub bin: PathBuf,
    pub seeds: Vec<Seed>,
    pub builtin: Vec<usize>,
    pub pool: Vec<Vec<u8>>,
    pub root: PathBuf,
    pub root_seeds: Vec<Seed>,
    pub proxy_manifest: PathBuf,
    pub proxy_log: PathBuf,
    pub proxy_ran: PathBuf,
    pub manifests: Vec<(String, Vec<u8>)>,
    /// Each test group of the JSON Schema Test Suite: the schema and its instances, as text.
    pub schemas: Vec<(String, Vec<String>)>,
    pub manifest_dir: PathBuf,
    pub fixtures_tree: String,
}

/// A file served only by mistake: its content must never reach a client.
pub const MARKER: &str = "MARKER-OF-A-FILE-NEVER-SERVED";

/// Sets up what the targets need under `config.scratch`.
pub fn setup(config: &Config) -> io::Result<World> {
    let seeds = load_seeds(&config.fixtures);
    let builtin = (0..seeds.len()).filter(|&i| serves_builtin(&seeds[i])).collect();
    let pool: Vec<Vec<u8>> = seeds.iter().flat_map(|s| s.chunks.iter().cloned()).collect();
    let fixtures = std::fs::canonicalize(&config.fixtures)?;
    let fixtures_tree = format!("{}/tree", fixtures.display());
    std::fs::create_dir_all(&config.scratch)?;
    let scratch = std::fs::canonicalize(&config.scratch)?;
    let root = trapped_root(&scratch)?;
    let root_seeds = root_seeds(&seeds, &fixtures_tree, &root);
    let (proxy_dir, proxy_ran, proxy_manifest) = proxy_upstream(&scratch)?;
    let manifest_dir = scratch.join("manifests");
    let manifests = manifests(&fixtures, &manifest_dir)?;
    Ok(World {
        bin: config.bin.clone(),
        seeds,
        builtin,
        pool,
        root,
        root_seeds,
        proxy_log: proxy_dir.join("upstream-saw.log"),
        proxy_ran,
        proxy_manifest,
        manifests,
        manifest_dir,
        fixtures_tree,
        schemas: load_schemas(&fixtures.join("json-schema-test-suite")),
    })
}

/// A root with everything a read must refuse beside what it may serve.
fn trapped_root(scratch: &Path) -> io::Result<PathBuf> {
    let top = scratch.join("files");
    let _ = std::fs::remove_dir_all(&top);
    let root = top.join("root");
    std::fs::create_dir_all(root.join("sub/deep"))?;
    std::fs::create_dir_all(root.join(".dot"))?;
    std::fs::write(top.join("secret.txt"), format!("{MARKER} outside\n"))?;
    std::fs::write(root.join("inside.txt"), "inside\n")?;
    std::fs::write(root.join("sub/deep/leaf.txt"), "leaf\n")?;
    std::fs::write(root.join("blob.bin"), [0u8, 159, 146, 150, 255])?;
    std::fs::write(root.join(".hidden.txt"), format!("{MARKER} hidden\n"))?;
    std::fs::write(root.join(".dot/inner.txt"), format!("{MARKER} dot-dir\n"))?;
    std::os::unix::fs::symlink("../secret.txt", root.join("link-out"))?;
    std::os::unix::fs::symlink("..", root.join("dir-out"))?;
    std::os::unix::fs::symlink(".hidden.txt", root.join("link-hidden"))?;
    std::os::unix::fs::symlink("inside.txt", root.join("link-in"))?;
    let _ = Command::new("mkfifo").arg(root.join("pipe")).status();
    Ok(root)
}

/// The seeds served with `--root`, their paths moved from the fixtures' tree to `root`.
fn root_seeds(seeds: &[Seed], fixtures_tree: &str, root: &Path) -> Vec<Seed> {
    seeds
        .iter()
        .filter(|s| s.args.iter().any(|a| a == "--root"))
        .map(|s| {
            let mut s = s.clone();
            let swap = |b: &Vec<u8>| {
                String::from_utf8_lossy(b)
                    .replace(fixtures_tree, &root.to_string_lossy())
                    .into_bytes()
            };
            s.chunks = s.chunks.iter().map(swap).collect();
            s
        })
        .collect()
}

/// The proxy's upstream: a manifest whose filtered tools leave a trace when they run.
/// Returns its directory, the trace file and the manifest.
fn proxy_upstream(scratch: &Path) -> io::Result<(PathBuf, PathBuf, PathBuf)> {
    let proxy_dir = scratch.join("proxy");
    std::fs::create_dir_all(&proxy_dir)?;
    let proxy_ran = proxy_dir.join("ran.log");
    let proxy_manifest = proxy_dir.join("upstream.json");
    let ran = proxy_ran.to_string_lossy();
    let manifest = format!(
        r#"{{"server":{{"name":"upstream","version":"1"}},"tools":[
{{"name":"echo","description":"allowed","inputSchema":{{"type":"object"}},"run":{{"argv":["printf","%s","ok"]}}}},
{{"name":"secret_tool","description":"filtered","inputSchema":{{"type":"object"}},"run":{{"argv":["sh","-c","echo secret_tool >> \"$0\"","{ran}"]}}}},
{{"name":"other_secret","description":"filtered","inputSchema":{{"type":"object"}},"run":{{"argv":["sh","-c","echo other_secret >> \"$0\"","{ran}"]}}}}]}}"#
    );
    std::fs::write(&proxy_manifest, manifest)?;
    Ok((proxy_dir, proxy_ran, proxy_manifest))
}

/// The fixture manifests to mutate (name and text), with what their relative paths name
/// copied into `manifest_dir`, where the mutated ones are written.
fn manifests(fixtures: &Path, manifest_dir: &Path) -> io::Result<Vec<(String, Vec<u8>)>> {
    let _ = std::fs::remove_dir_all(manifest_dir);
    std::fs::create_dir_all(manifest_dir.join("scripts"))?;
    let mut manifests = Vec::new();
    for entry in std::fs::read_dir(fixtures.join("manifests"))?.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "json") {
            manifests.push((
                path.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&path)?,
            ));
        }
    }
    manifests.sort();
    for entry in std::fs::read_dir(fixtures.join("manifests/scripts"))?.flatten() {
        std::fs::copy(entry.path(), manifest_dir.join("scripts").join(entry.file_name()))?;
    }
    Ok(manifests)
}

/// Each test group of the suite's `draft2020-12` and `draft7` files: its schema and its
/// instances, as text.
fn load_schemas(suite: &Path) -> Vec<(String, Vec<String>)> {
    let mut files = Vec::new();
    for draft in ["draft2020-12", "draft7"] {
        if let Ok(entries) = std::fs::read_dir(suite.join(draft)) {
            files.extend(
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "json")),
            );
        }
    }
    files.sort();
    let mut groups = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        let Ok(serde_json::Value::Array(list)) = serde_json::from_str::<serde_json::Value>(&text)
        else {
            continue;
        };
        for group in list {
            let instances = group["tests"].as_array().map_or_else(Vec::new, |tests| {
                tests.iter().map(|t| t["data"].to_string()).collect()
            });
            groups.push((group["schema"].to_string(), instances));
        }
    }
    groups
}
